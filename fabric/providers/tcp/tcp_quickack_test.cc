// A Connection reading a large message over a real loopback TCP connection
// asks the kernel to acknowledge at once (TCP_QUICKACK) while bytes of the
// message are still to come, and leaves small messages alone.
//
// Linux delays the ACKs of a connection it sees carrying requests and
// replies ("pingpong" mode), which getsockopt(TCP_QUICKACK) reports as 0;
// the sender of a large message then waits for its window. These tests put
// the receiving socket in that mode first, with a few small exchanges.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/stream/connection.h"
#include "fabric/providers/stream/wire.h"
#include "fabric/providers/tcp/tcp_socket_stream.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

// Receives every message into one buffer and counts them.
class BufferHandler : public stream::ConnectionHandler {
 public:
  stream::RxTarget OnHeader(const stream::Header& header,
                            const stream::RmaDescriptor*) override {
    buffer_.resize(header.size);
    iov_ = {buffer_.data(), buffer_.size()};
    stream::RxTarget target;
    target.kind = stream::RxTarget::kUser;
    target.iov = &iov_;
    target.iov_count = 1;
    target.capacity = buffer_.size();
    return target;
  }
  void OnMessageDone(const stream::Header&, size_t placed) override {
    ++done_;
    placed_ = placed;
  }
  void OnSent(std::unique_ptr<stream::TxEntry>) override {}
  void OnClosed(int error) override { closed_ = true; }
  void OnBacklog(bool) override {}

  int done() const { return done_; }
  size_t placed() const { return placed_; }
  bool closed() const { return closed_; }
  const std::vector<char>& buffer() const { return buffer_; }

 private:
  std::vector<char> buffer_;
  iovec iov_ = {};
  int done_ = 0;
  size_t placed_ = 0;
  bool closed_ = false;
};

class QuickAckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address),
                   sizeof(address)),
              0);
    ASSERT_EQ(listen(listener, 1), 0);
    socklen_t length = sizeof(address);
    ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&address),
                          &length),
              0);
    sender_ = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(sender_, 0);
    ASSERT_EQ(connect(sender_, reinterpret_cast<sockaddr*>(&address),
                      sizeof(address)),
              0);
    receiver_ = accept(listener, nullptr, nullptr);
    ASSERT_GE(receiver_, 0);
    close(listener);
    int one = 1;
    setsockopt(sender_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(receiver_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // Small requests and replies: the receiving side's ACKs turn delayed.
    for (int i = 0; i < 8; ++i) {
      char byte = 'q';
      ASSERT_EQ(send(sender_, &byte, 1, 0), 1);
      ASSERT_EQ(recv(receiver_, &byte, 1, 0), 1);
      ASSERT_EQ(send(receiver_, &byte, 1, 0), 1);
      ASSERT_EQ(recv(sender_, &byte, 1, 0), 1);
    }
    ASSERT_EQ(QuickAck(), 0) << "the kernel did not delay ACKs here";
    ASSERT_EQ(fcntl(receiver_, F_SETFL, O_NONBLOCK), 0);
    connection_ = std::make_unique<stream::Connection>(
        std::make_unique<SocketStream>(receiver_), &handler_, &copier_);
  }

  void TearDown() override {
    connection_.reset();  // closes receiver_
    if (sender_ >= 0) close(sender_);
  }

  // getsockopt(TCP_QUICKACK) of the receiving socket: 0 while its ACKs are
  // delayed.
  int QuickAck() const {
    int value = -1;
    socklen_t length = sizeof(value);
    getsockopt(receiver_, IPPROTO_TCP, TCP_QUICKACK, &value, &length);
    return value;
  }

  // Writes a kMsg header and the first `sent` of `size` payload bytes.
  void SendStart(uint64_t size, size_t sent, char fill) {
    stream::Header header = {};
    header.op = static_cast<uint8_t>(stream::Op::kMsg);
    header.size = size;
    std::string bytes(reinterpret_cast<char*>(&header), sizeof(header));
    bytes.append(sent, fill);
    ASSERT_EQ(send(sender_, bytes.data(), bytes.size(), 0),
              static_cast<ssize_t>(bytes.size()));
  }

  // Calls Progress until `done` messages completed (or 100000 passes).
  void ProgressUntil(int done) {
    for (int i = 0; i < 100000 && handler_.done() < done; ++i) {
      connection_->Progress();
    }
  }

  int sender_ = -1;
  int receiver_ = -1;
  BufferHandler handler_;
  HmemCopier copier_;
  std::unique_ptr<stream::Connection> connection_;
};

TEST_F(QuickAckTest, ALargeMessageInProgressIsAcknowledgedAtOnce) {
  constexpr size_t kSize = 1 << 20;
  constexpr size_t kFirst = 256 * 1024;
  SendStart(kSize, kFirst, 'a');
  // Read what arrived; the rest of the message is still to come.
  for (int i = 0; i < 1000; ++i) connection_->Progress();
  ASSERT_EQ(handler_.done(), 0);
  EXPECT_EQ(QuickAck(), 1);
  std::string rest(kSize - kFirst, 'a');
  size_t at = 0;
  while (at < rest.size()) {
    ssize_t n = send(sender_, rest.data() + at, rest.size() - at, 0);
    ASSERT_GT(n, 0);
    at += static_cast<size_t>(n);
    connection_->Progress();
  }
  ProgressUntil(1);
  ASSERT_EQ(handler_.done(), 1);
  EXPECT_EQ(handler_.placed(), kSize);
  EXPECT_EQ(std::string(handler_.buffer().begin(), handler_.buffer().end()),
            std::string(kSize, 'a'));
}

TEST_F(QuickAckTest, SmallMessagesCostNoExtraCall) {
  for (int i = 0; i < 4; ++i) SendStart(64, 64, 'b');
  ProgressUntil(4);
  ASSERT_EQ(handler_.done(), 4);
  EXPECT_EQ(handler_.placed(), 64u);
  EXPECT_EQ(QuickAck(), 0);  // still delayed: nobody asked
  EXPECT_FALSE(handler_.closed());
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

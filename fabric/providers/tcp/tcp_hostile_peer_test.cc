// A real tcp MSG endpoint (server side, C API) against a raw socket that
// speaks the wire protocol itself (tcp_cm.h, wire.h): what a peer of
// another version or a hostile one can send. Requests the endpoint does not
// support are answered with an error status and the connection lives on;
// malformed data closes the connection with FI_SHUTDOWN and error
// completions on the endpoint's side, never anything worse.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/stream/wire.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

constexpr auto kPatience = std::chrono::seconds(10);

class TcpHostilePeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fixtures::OpenLoopbackDomain(
                  FI_EP_MSG, FI_MSG | FI_RMA | FI_ATOMIC,
                  [](fi_info* hints) {
                    hints->domain_attr->mr_mode =
                        FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
                    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                  },
                  &side_),
              0);
    fi_eq_attr eq_attr = {};
    eq_attr.wait_obj = FI_WAIT_UNSPEC;
    ASSERT_EQ(fi_eq_open(side_.fabric, &eq_attr, &side_.eq, nullptr), 0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(side_.domain, &cq_attr, &side_.cq, nullptr), 0);
    ASSERT_EQ(fi_passive_ep(side_.fabric, side_.info, &side_.pep, nullptr), 0);
    ASSERT_EQ(fi_pep_bind(side_.pep, &side_.eq->fid, 0), 0);
    ASSERT_EQ(fi_listen(side_.pep), 0);
    ASSERT_EQ(fi_mr_reg(side_.domain, &target_, sizeof(target_),
                        FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &side_.mr,
                        nullptr),
              0);
    ConnectRawPeer();
  }

  void TearDown() override {
    if (raw_ >= 0) close(raw_);
    EXPECT_EQ(fixtures::CloseObjects(&side_), 0);
  }

  // The next EQ event (waiting up to 5 s); its entry in *entry.
  uint32_t NextEvent(fi_eq_cm_entry* entry) {
    uint32_t event = 0;
    ssize_t n = fi_eq_sread(side_.eq, &event, entry, sizeof(*entry), 5000, 0);
    EXPECT_GT(n, 0) << fi_strerror(static_cast<int>(-n));
    return n > 0 ? event : 0;
  }

  // The raw socket connects and handshakes; the endpoint accepts it.
  void ConnectRawPeer() {
    size_t len = sizeof(sockaddr_in);
    sockaddr_in name = {};
    ASSERT_EQ(fi_getname(&side_.pep->fid, &name, &len), 0);
    raw_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(raw_, 0);
    ASSERT_EQ(connect(raw_, reinterpret_cast<sockaddr*>(&name), sizeof(name)),
              0);
    ASSERT_TRUE(SendCm(raw_, CmType::kConnRequest, "", nullptr, 0).ok());
    fi_eq_cm_entry entry = {};
    ASSERT_EQ(NextEvent(&entry), FI_CONNREQ);
    ASSERT_EQ(fi_endpoint(side_.domain, entry.info, &side_.ep, nullptr), 0);
    fi_freeinfo(entry.info);
    ASSERT_EQ(fi_ep_bind(side_.ep, &side_.eq->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(side_.ep, &side_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(side_.ep), 0);
    ASSERT_EQ(fi_accept(side_.ep, nullptr, 0), 0);
    ASSERT_EQ(NextEvent(&entry), FI_CONNECTED);
    CmReader reader;
    CmReader::Result result = CmReader::kPending;
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (result == CmReader::kPending &&
           std::chrono::steady_clock::now() < deadline) {
      result = reader.Read(raw_);
    }
    ASSERT_EQ(result, CmReader::kDone);
    ASSERT_EQ(reader.type(), CmType::kAccept);
  }

  void SendRaw(const void* data, size_t len) {
    ASSERT_EQ(send(raw_, data, len, MSG_NOSIGNAL), static_cast<ssize_t>(len));
  }

  // An atomic with one 4-byte operand on the 4 bytes at `offset` from the
  // registered int32/float `target_`.
  void SendAtomic(int datatype, int op, uint64_t id, const void* operand,
                  uint64_t offset = 0) {
    stream::Header header = {};
    header.op = static_cast<uint8_t>(stream::Op::kAtomic);
    header.rma_count = 1;
    header.size = 4;
    header.tag = stream::PackAtomic(
        stream::AtomicCode{datatype, op, AtomicKind::kWrite});
    header.id = id;
    stream::RmaDescriptor descriptor = {
        reinterpret_cast<uint64_t>(&target_) + offset, 4, fi_mr_key(side_.mr)};
    std::vector<char> frame(sizeof(header) + sizeof(descriptor) + 4);
    memcpy(frame.data(), &header, sizeof(header));
    memcpy(frame.data() + sizeof(header), &descriptor, sizeof(descriptor));
    memcpy(frame.data() + sizeof(header) + sizeof(descriptor), operand, 4);
    SendRaw(frame.data(), frame.size());
  }

  // Reads the endpoint's CQ (manual progress) until the raw socket has a
  // whole header to read, or it closes (false).
  bool ReadAnswer(stream::Header* answer) {
    size_t have = 0;
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (have < sizeof(*answer) &&
           std::chrono::steady_clock::now() < deadline) {
      fi_cq_tagged_entry entry;
      fi_cq_read(side_.cq, &entry, 1);
      ssize_t n = recv(raw_, reinterpret_cast<char*>(answer) + have,
                       sizeof(*answer) - have, MSG_DONTWAIT);
      if (n == 0) return false;
      if (n > 0) have += static_cast<size_t>(n);
    }
    return have == sizeof(*answer);
  }

  // The next answer is a kAck of request `id` with `status`.
  void ExpectAck(uint64_t id, int32_t status) {
    stream::Header answer = {};
    ASSERT_TRUE(ReadAnswer(&answer));
    EXPECT_EQ(answer.op, static_cast<uint8_t>(stream::Op::kAck));
    EXPECT_EQ(answer.id, id);
    EXPECT_EQ(answer.status, status);
  }

  // Drives the endpoint until the raw socket sees the connection closed.
  bool WaitForClose() {
    auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      fi_cq_tagged_entry entry;
      fi_cq_read(side_.cq, &entry, 1);
      char byte;
      ssize_t n = recv(raw_, &byte, 1, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

  // Our side: the listener, its EQ and CQ, the accepted endpoint, a region.
  fixtures::Objects side_;
  int raw_ = -1;
  union {
    int32_t i;
    float f;
  } target_ = {5};
};

TEST_F(TcpHostilePeerTest, UnsupportedAtomicIsRefusedAndTheConnectionLives) {
  // Bitwise OR on a float is no fi_atomic(3) operation: a well-formed
  // request the target refuses with FI_EOPNOTSUPP.
  float operand = 1.0f;
  SendAtomic(FI_FLOAT, FI_BOR, 41, &operand);
  ExpectAck(41, -FI_EOPNOTSUPP);
  EXPECT_EQ(target_.i, 5);
  // The same connection still serves a supported atomic.
  int32_t add = 3;
  SendAtomic(FI_INT32, FI_SUM, 42, &add);
  ExpectAck(42, 0);
  EXPECT_EQ(target_.i, 8);
}

TEST_F(TcpHostilePeerTest, MalformedDataClosesTheConnectionWithErrors) {
  char buffer[16];
  int context;
  ASSERT_EQ(fi_recv(side_.ep, buffer, sizeof(buffer), nullptr, 0, &context), 0);
  stream::Header header = {};
  header.op = 99;  // no such opcode
  header.size = 8;
  SendRaw(&header, sizeof(header));
  ASSERT_TRUE(WaitForClose());
  // The posted receive fails; the endpoint reports the shutdown.
  fi_cq_tagged_entry entry;
  ssize_t n = 0;
  auto deadline = std::chrono::steady_clock::now() + kPatience;
  while ((n = fi_cq_read(side_.cq, &entry, 1)) == -FI_EAGAIN &&
         std::chrono::steady_clock::now() < deadline) {
  }
  ASSERT_EQ(n, -FI_EAVAIL);
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(side_.cq, &error, 0), 1);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_NE(error.err, 0);
  fi_eq_cm_entry event = {};
  EXPECT_EQ(NextEvent(&event), FI_SHUTDOWN);
  EXPECT_EQ(target_.i, 5);
}

// A message whose payload would be copied out of the sender's memory
// (kPayloadInSender, which only shm peers that can do so send): a TCP peer
// cannot ask that, and the connection closes without touching the buffer.
TEST_F(TcpHostilePeerTest, APayloadLeftInTheSenderClosesTheConnection) {
  char buffer[16] = "untouched";
  ASSERT_EQ(fi_recv(side_.ep, buffer, sizeof(buffer), nullptr, 0, nullptr), 0);
  struct {
    stream::Header header;
    stream::RmaDescriptor where;
  } message = {};
  message.header.op = static_cast<uint8_t>(stream::Op::kMsg);
  message.header.flags = stream::kPayloadInSender | stream::kAckRequested;
  message.header.rma_count = 1;
  message.header.size = 8;
  message.where = {reinterpret_cast<uint64_t>(&target_), 8, 0};
  SendRaw(&message, sizeof(message));
  ASSERT_TRUE(WaitForClose());
  EXPECT_STREQ(buffer, "untouched");
}

// A request to help copy a message (kAssist, between shm peers that share
// memory): a TCP peer has nothing to share, and the connection closes
// without writing anywhere.
TEST_F(TcpHostilePeerTest, AnAssistRequestClosesTheConnection) {
  struct {
    stream::Header header;
    stream::RmaDescriptor where;
  } message = {};
  message.header.op = static_cast<uint8_t>(stream::Op::kAssist);
  message.header.rma_count = 1;
  message.header.tag = 1;   // job
  message.header.data = 8;  // bytes
  message.where = {reinterpret_cast<uint64_t>(&target_), 8, 0};
  SendRaw(&message, sizeof(message));
  ASSERT_TRUE(WaitForClose());
  EXPECT_EQ(target_.i, 5);
}

TEST_F(TcpHostilePeerTest, AtomicOutsideTheRegionIsRefused) {
  int32_t operand = 1;
  SendAtomic(FI_INT32, FI_SUM, 7, &operand, /*offset=*/4);  // past the int
  ExpectAck(7, -FI_EACCES);
  EXPECT_EQ(target_.i, 5);
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

// MsgStream over a real pair of connected MSG endpoints (tcp on
// 127.0.0.1, through the public API): bytes arrive whole and in order
// whatever the sizes written and read, a writer that runs out of send
// buffers gets -EAGAIN until the reader reads, the end arrives after the
// data, closing a stream leaves its buffers retired until the CQ is read
// dry, and a payload one stream exposes the other reads with RMA reads
// (rendezvous; tcp serves them in the domain's progress, which the
// owner's CQ reads run: both endpoints share the domain here).
#include "fabric/providers/rxm/msg_stream.h"

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "fabric/api/core/status.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/util/cq.h"
#include "gtest/gtest.h"

namespace fabric {
namespace rxm {
namespace {

class MsgStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fi_info* hints = fi_allocinfo();
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), "127.0.0.1", "0", FI_SOURCE, hints,
                         &side_.info),
              0);
    fi_freeinfo(hints);
    ASSERT_EQ(fi_fabric(side_.info->fabric_attr, &side_.fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(side_.fabric, side_.info, &side_.domain, nullptr), 0);
    fi_eq_attr eq_attr = {};
    ASSERT_EQ(fi_eq_open(side_.fabric, &eq_attr, &side_.eq, nullptr), 0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_MSG;
    cq_attr.size = 256;
    ASSERT_EQ(fi_cq_open(side_.domain, &cq_attr, &side_.cq, nullptr), 0);
    // A passive endpoint; a client endpoint connects to it.
    ASSERT_EQ(fi_passive_ep(side_.fabric, side_.info, &side_.pep, nullptr), 0);
    ASSERT_EQ(fi_pep_bind(side_.pep, &side_.eq->fid, 0), 0);
    ASSERT_EQ(fi_listen(side_.pep), 0);
    char name[64];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&side_.pep->fid, name, &len), 0);
    fid_ep* client = OpenEndpoint(side_.info);
    ASSERT_NE(client, nullptr);
    reads_.cq = side_.cq;
    reads_.virt_addr = (side_.info->domain_attr->mr_mode &
                        (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
    const size_t inject_size =
        inject_small_writes_ ? side_.info->tx_attr->inject_size : 0;
    absl::StatusOr<std::unique_ptr<MsgStream>> opened = MsgStream::Open(
        side_.domain, client, false, &retired_, &reads_, inject_size);
    ASSERT_TRUE(opened.ok()) << opened.status();
    client_ = *std::move(opened);
    ASSERT_EQ(fi_connect(client, name, nullptr, 0), 0);
    // The request, accepted on an endpoint of its own.
    fi_eq_cm_entry entry;
    uint32_t event = 0;
    ASSERT_EQ(WaitEvent(&event, &entry), 0);
    ASSERT_EQ(event, FI_CONNREQ);
    fid_ep* server = OpenEndpoint(entry.info);
    fi_freeinfo(entry.info);
    ASSERT_NE(server, nullptr);
    opened = MsgStream::Open(side_.domain, server, false, &retired_, &reads_,
                             inject_size);
    ASSERT_TRUE(opened.ok()) << opened.status();
    server_ = *std::move(opened);
    ASSERT_EQ(fi_accept(server, nullptr, 0), 0);
    for (int connected = 0; connected < 2;) {
      ASSERT_EQ(WaitEvent(&event, &entry), 0);
      ASSERT_EQ(event, FI_CONNECTED);
      (entry.fid == &server->fid ? server_ : client_)->OnConnected();
      ++connected;
    }
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    Drain();
    retired_.clear();
    EXPECT_EQ(fixtures::CloseObjects(&side_), 0);
  }

  fid_ep* OpenEndpoint(fi_info* info) {
    fid_ep* ep = nullptr;
    if (fi_endpoint(side_.domain, info, &ep, nullptr) != 0) return nullptr;
    if (fi_ep_bind(ep, &side_.eq->fid, 0) != 0 ||
        fi_ep_bind(ep, &side_.cq->fid, FI_TRANSMIT | FI_RECV) != 0 ||
        fi_enable(ep) != 0) {
      fi_close(&ep->fid);
      return nullptr;
    }
    return ep;
  }

  // The next EQ event within 5 s, the CQ read dry meanwhile: 0 or a
  // negative fi_errno.
  int WaitEvent(uint32_t* event, fi_eq_cm_entry* entry) {
    std::vector<char> data;
    ssize_t n =
        fixtures::WaitForEvent(side_.eq, event, &data, nullptr,
                               std::chrono::seconds(5), [this] { Drain(); });
    *entry = fixtures::CmEntryOf(data);
    return n < 0 ? static_cast<int>(n) : 0;
  }

  // What the owner of the streams does each pass: reads the CQ dry and
  // hands each completion to its stream.
  void Drain() {
    for (;;) {
      fi_cq_msg_entry entries[16];
      ssize_t n = fi_cq_read(side_.cq, entries, 16);
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        ASSERT_EQ(fi_cq_readerr(side_.cq, &error, 0), 1);
        MsgStream::DispatchError(error.op_context, error.err);
        continue;
      }
      if (n <= 0) return;
      for (ssize_t i = 0; i < n; ++i) {
        MsgStream::DispatchCompletion(entries[i].op_context, entries[i].len);
      }
    }
  }

  // Writes all of `data` to `from` while reading `to` into *out, until
  // `expected` bytes arrived; false after 30 s. Writes and reads go in
  // pieces of random sizes; with `small_writes`, every other write takes at
  // most that many bytes.
  bool Transfer(MsgStream* from, const std::string& data, MsgStream* to,
                size_t expected, std::string* out, std::mt19937* random,
                size_t small_writes = 0) {
    bool small = false;
    size_t sent = 0;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    std::vector<char> buf(100000);
    while (out->size() < expected) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      Drain();
      if (sent < data.size()) {
        small = small_writes > 0 && !small;
        const size_t most = small ? small_writes : 70000;
        size_t n =
            std::min<size_t>(data.size() - sent, 1 + (*random)() % most);
        // Two pieces, as the data path writes a header and a payload.
        size_t half = n / 2;
        iovec iov[2] = {{const_cast<char*>(data.data() + sent), half},
                        {const_cast<char*>(data.data() + sent + half),
                         n - half}};
        ssize_t rc = from->Write(iov, 2);
        if (rc > 0) {
          sent += static_cast<size_t>(rc);
        } else if (rc != -EAGAIN) {
          ADD_FAILURE() << "Write: " << rc;
          return false;
        }
      }
      size_t want = 1 + (*random)() % buf.size();
      iovec into = {buf.data(), want};
      ssize_t rc = to->Read(&into, 1);
      if (rc > 0) {
        out->append(buf.data(), static_cast<size_t>(rc));
      } else if (rc != -EAGAIN) {
        ADD_FAILURE() << "Read: " << rc;
        return false;
      }
    }
    return true;
  }

  // Reads what `from` names into `to` through `stream` (StartPull), doing
  // the owner's work meanwhile: the bytes read or -errno; -ETIMEDOUT after
  // 10 s.
  ssize_t Pull(MsgStream* stream, const iovec* to, size_t to_count,
               const stream::RmaDescriptor* from, size_t from_count) {
    std::unique_ptr<stream::PullJob> job =
        stream->StartPull(to, to_count, from, from_count);
    if (job == nullptr) return -ENOSYS;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t n = job->Finish();
      if (n != -EAGAIN) return n;
      Drain();
    }
    return -ETIMEDOUT;
  }

  bool inject_small_writes_ = false;  // streams opened with inject_size
  fixtures::Objects side_;
  RmaReads reads_;
  RetiredBuffers retired_;
  std::unique_ptr<MsgStream> client_;
  std::unique_ptr<MsgStream> server_;
};

// Streams whose writes of at most the endpoint's inject_size go by
// fi_inject.
class MsgStreamInjectTest : public MsgStreamTest {
 protected:
  MsgStreamInjectTest() { inject_small_writes_ = true; }
};

std::string Pattern(size_t size, uint32_t seed) {
  std::string data(size, '\0');
  std::mt19937 random(seed);
  for (char& c : data) c = static_cast<char>(random());
  return data;
}

TEST_F(MsgStreamTest, BytesArriveWholeAndInOrderBothWays) {
  std::mt19937 random(7);
  const std::string there = Pattern(3 << 20, 1);
  const std::string back = Pattern(1 << 20, 2);
  std::string received;
  ASSERT_TRUE(Transfer(client_.get(), there, server_.get(), there.size(),
                       &received, &random));
  EXPECT_TRUE(received == there);
  received.clear();
  ASSERT_TRUE(Transfer(server_.get(), back, client_.get(), back.size(),
                       &received, &random));
  EXPECT_TRUE(received == back);
}

TEST_F(MsgStreamTest, AWriterWaitsForItsReader) {
  // Nobody reads: the receive buffers, the provider's queues and the
  // sockets fill, then the send buffers (a send completes once the
  // provider took it), and Write takes nothing more.
  const std::string data = Pattern(64 << 20, 3);
  size_t sent = 0;
  for (int refused = 0; refused < 1000 && sent < data.size();) {
    Drain();
    iovec iov = {const_cast<char*>(data.data() + sent), data.size() - sent};
    ssize_t rc = client_->Write(&iov, 1);
    if (rc > 0) {
      sent += static_cast<size_t>(rc);
      refused = 0;
    } else {
      ASSERT_EQ(rc, -EAGAIN);
      ++refused;
    }
  }
  EXPECT_LT(sent, data.size());
  EXPECT_GE(sent, kRxBuffers * kBufferSize);
  // The reader takes everything, and the writer finishes.
  std::string received;
  std::mt19937 random(9);
  ASSERT_TRUE(Transfer(client_.get(), data.substr(sent), server_.get(),
                       data.size(), &received, &random));
  EXPECT_TRUE(received == data);
}

TEST_F(MsgStreamTest, TheEndArrivesAfterTheData) {
  const std::string data = Pattern(100000, 4);
  std::string received;
  std::mt19937 random(11);
  size_t sent = 0;
  while (sent < data.size()) {
    Drain();
    iovec iov = {const_cast<char*>(data.data() + sent), data.size() - sent};
    ssize_t rc = client_->Write(&iov, 1);
    if (rc > 0) sent += static_cast<size_t>(rc);
  }
  // Everything was handed to the provider; then the client ends.
  for (int pass = 0; pass < 100; ++pass) Drain();
  client_->Shutdown();
  iovec iov = {const_cast<char*>(data.data()), 1};
  EXPECT_EQ(client_->Write(&iov, 1), -EPIPE);
  ASSERT_TRUE(Transfer(client_.get(), std::string(), server_.get(),
                       data.size(), &received, &random));
  EXPECT_TRUE(received == data);
  // The server learns of the shutdown from its EQ.
  uint32_t event = 0;
  fi_eq_cm_entry entry;
  ASSERT_EQ(WaitEvent(&event, &entry), 0);
  EXPECT_EQ(event, FI_SHUTDOWN);
  server_->OnPeerShutdown();
  char byte;
  iovec one = {&byte, 1};
  EXPECT_EQ(server_->Read(&one, 1), 0);
}

TEST_F(MsgStreamTest, AClosedStreamsBuffersWaitForTheCqToBeRead) {
  const std::string data = Pattern(50000, 5);
  iovec iov = {const_cast<char*>(data.data()), data.size()};
  ASSERT_GT(client_->Write(&iov, 1), 0);
  client_.reset();  // sends may still complete into the CQ
  ASSERT_EQ(retired_.size(), 1u);
  EXPECT_EQ(retired_[0]->stream, nullptr);
  Drain();  // entries of the retired buffers are dropped
  retired_.clear();
}

TEST_F(MsgStreamTest, AnExposedPayloadIsReadFromTheSendersMemory) {
  ASSERT_TRUE(client_->PeerCanPull());
  ASSERT_TRUE(server_->CanPull());
  // Three pieces, over 1 MiB in all (more than one read), read into two.
  const std::string data = Pattern(3 * 1024 * 1024 + 5, 11);
  iovec pieces[3] = {
      {const_cast<char*>(data.data()), 1000},
      {const_cast<char*>(data.data() + 1000), 2 * 1024 * 1024},
      {const_cast<char*>(data.data() + 1000 + 2 * 1024 * 1024),
       data.size() - 1000 - 2 * 1024 * 1024}};
  stream::RmaDescriptor descriptors[3];
  absl::StatusOr<std::unique_ptr<stream::PullExposure>> exposed =
      client_->Expose(pieces, 3, descriptors);
  ASSERT_TRUE(exposed.ok()) << exposed.status();
  ASSERT_NE(*exposed, nullptr);  // registrations held until the peer's done
  std::string into(data.size(), '\0');
  iovec to[2] = {{into.data(), 7},
                 {into.data() + 7, into.size() - 7}};
  ASSERT_EQ(Pull(server_.get(), to, 2, descriptors, 3),
            static_cast<ssize_t>(data.size()));
  EXPECT_EQ(into, data);
  // A receive shorter than the payload takes what fits.
  std::string shorter(4096, '\0');
  iovec short_to = {shorter.data(), shorter.size()};
  ASSERT_EQ(Pull(server_.get(), &short_to, 1, descriptors, 3), 4096);
  EXPECT_EQ(shorter, data.substr(0, 4096));
}

TEST_F(MsgStreamTest, AReadWithAKeyNeverGivenFailsThePull) {
  const std::string data = Pattern(64 * 1024, 12);
  iovec piece = {const_cast<char*>(data.data()), data.size()};
  stream::RmaDescriptor descriptor;
  absl::StatusOr<std::unique_ptr<stream::PullExposure>> exposed =
      client_->Expose(&piece, 1, &descriptor);
  ASSERT_TRUE(exposed.ok()) << exposed.status();
  descriptor.key += 1000;
  std::string into(data.size(), '\0');
  iovec to = {into.data(), into.size()};
  EXPECT_EQ(Pull(server_.get(), &to, 1, &descriptor, 1), -ECONNRESET);
}

TEST_F(MsgStreamTest, StreamsWithoutRmaReadsExposeNothing) {
  MsgStream* plain = nullptr;
  // A stream opened without RmaReads sends every payload through itself.
  fid_ep* ep = OpenEndpoint(side_.info);
  ASSERT_NE(ep, nullptr);
  absl::StatusOr<std::unique_ptr<MsgStream>> opened =
      MsgStream::Open(side_.domain, ep, false, &retired_);
  ASSERT_TRUE(opened.ok()) << opened.status();
  plain = opened->get();
  EXPECT_FALSE(plain->CanPull());
  EXPECT_FALSE(plain->PeerCanPull());
  char byte = 0;
  iovec piece = {&byte, 1};
  stream::RmaDescriptor descriptor;
  EXPECT_EQ(ToFiErrno(plain->Expose(&piece, 1, &descriptor).status()),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(plain->StartPull(&piece, 1, &descriptor, 1), nullptr);
}

TEST_F(MsgStreamInjectTest, InjectedAndSentWritesArriveWholeAndInOrder) {
  const size_t inject_size = side_.info->tx_attr->inject_size;
  ASSERT_GT(inject_size, 0u);
  std::mt19937 random(11);
  const std::string data = Pattern(2 << 20, 12);
  std::string received;
  ASSERT_TRUE(Transfer(client_.get(), data, server_.get(), data.size(),
                       &received, &random, inject_size));
  EXPECT_TRUE(received == data);
}

TEST_F(MsgStreamInjectTest, InjectsCountAsDoneOnceAnEmptySendConfirmsThem) {
  ASSERT_TRUE(client_->sends_done());
  std::string data = Pattern(10, 13);
  iovec iov = {data.data(), data.size()};
  ASSERT_EQ(client_->Write(&iov, 1), 10);
  // An inject has no completion: nothing says it left.
  Drain();
  EXPECT_FALSE(client_->sends_done());
  client_->ConfirmInjects();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!client_->sends_done() &&
         std::chrono::steady_clock::now() < deadline) {
    Drain();
  }
  EXPECT_TRUE(client_->sends_done());
  // The reader gets the bytes, and nothing of the empty send.
  std::string received;
  char buf[64];
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (received.size() < data.size() &&
         std::chrono::steady_clock::now() < deadline) {
    Drain();
    iovec into = {buf, sizeof(buf)};
    ssize_t n = server_->Read(&into, 1);
    if (n > 0) received.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(received, data);
  Drain();
  iovec into = {buf, sizeof(buf)};
  EXPECT_EQ(server_->Read(&into, 1), -EAGAIN);
}

TEST_F(MsgStreamInjectTest, AtMostKTxBuffersMessagesGoUnconfirmed) {
  ASSERT_GE(side_.info->tx_attr->inject_size, 8u);
  const std::string data = Pattern(8 * 3 * kTxBuffers, 14);
  size_t sent = 0;
  auto write_one = [&] {
    iovec iov = {const_cast<char*>(data.data() + sent), 8};
    ssize_t rc = client_->Write(&iov, 1);
    if (rc == 8) sent += 8;
    return rc;
  };
  // Nobody reads the CQ, so nothing confirms an inject or completes a
  // send: kTxBuffers - 1 injects and one send, then Write refuses.
  while (sent < data.size() && write_one() == 8) {
  }
  EXPECT_EQ(sent, 8 * kTxBuffers);
  EXPECT_EQ(write_one(), -EAGAIN);
  // Once the send's completion is read, writes go on; all arrive in order.
  std::string received;
  char buf[256];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (received.size() < data.size() &&
         std::chrono::steady_clock::now() < deadline) {
    Drain();
    if (sent < data.size()) {
      ssize_t rc = write_one();
      ASSERT_TRUE(rc == 8 || rc == -EAGAIN) << rc;
    }
    iovec into = {buf, sizeof(buf)};
    ssize_t n = server_->Read(&into, 1);
    if (n > 0) received.append(buf, static_cast<size_t>(n));
  }
  EXPECT_TRUE(received == data);
}

TEST_F(MsgStreamTest, StreamsOverEndpointsWithoutACqProducerReadTheCq) {
  // tcp has no CqDirectProducer: it says so, and the stream has none.
  CqDirectProducer* producer = nullptr;
  EXPECT_EQ(fi_control(&client_->ep()->fid, kControlGetCqDirectProducer,
                       &producer),
            -FI_ENOSYS);
  EXPECT_EQ(producer, nullptr);
  EXPECT_EQ(client_->direct_producer(), nullptr);
}

TEST_F(MsgStreamTest, AFailedInjectsEntryWithoutContextIsPassedOver) {
  // A provider reports a failed inject with no op_context: nothing to hand
  // back (the connection's flushed receives end the stream).
  MsgStream::DispatchError(nullptr, FI_EIO);
  MsgStream::DispatchCompletion(nullptr, 0);
  std::mt19937 random(15);
  const std::string data = Pattern(1000, 16);
  std::string received;
  ASSERT_TRUE(Transfer(client_.get(), data, server_.get(), data.size(),
                       &received, &random));
  EXPECT_TRUE(received == data);
}

TEST_F(MsgStreamTest, PeekLendsTheReceivedBytesInPlace) {
  size_t length = 1;
  EXPECT_NE(server_->Peek(&length), nullptr);  // it lends, none arrived
  EXPECT_EQ(length, 0u);
  // More messages than receive buffers, each read in place in two pieces:
  // a buffer read to its end is posted again, or the later ones would
  // never arrive.
  for (size_t i = 0; i < 3 * kRxBuffers; ++i) {
    const std::string message = Pattern(10, static_cast<uint32_t>(100 + i));
    iovec iov = {const_cast<char*>(message.data()), message.size()};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (client_->Write(&iov, 1) == -EAGAIN &&
           std::chrono::steady_clock::now() < deadline) {
      Drain();
    }
    const char* bytes = nullptr;
    while ((bytes = server_->Peek(&length)) != nullptr && length == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      Drain();
    }
    ASSERT_NE(bytes, nullptr);
    ASSERT_EQ(std::string(bytes, length), message) << "message " << i;
    server_->Consume(4);
    bytes = server_->Peek(&length);
    ASSERT_EQ(std::string(bytes, length), message.substr(4));
    server_->Consume(length);
    EXPECT_NE(server_->Peek(&length), nullptr);
    EXPECT_EQ(length, 0u);
  }
  // At the end, nothing is lent: Read reports the end.
  client_->Shutdown();
  uint32_t event = 0;
  fi_eq_cm_entry entry;
  ASSERT_EQ(WaitEvent(&event, &entry), 0);
  ASSERT_EQ(event, FI_SHUTDOWN);
  server_->OnPeerShutdown();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server_->Peek(&length) != nullptr &&
         std::chrono::steady_clock::now() < deadline) {
    Drain();
  }
  EXPECT_EQ(server_->Peek(&length), nullptr);
  char byte;
  iovec one = {&byte, 1};
  EXPECT_EQ(server_->Read(&one, 1), 0);
}

}  // namespace
}  // namespace rxm
}  // namespace fabric

// tcp RDM endpoints in one process reach each other through shm by default
// (tcp_local_path.h): which path each peer takes, the application seeing
// one endpoint and one CQ, and one receive queue across both paths.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/tcp/tcp_rdm_ep.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

// An endpoint of the test, and its tcp RDM endpoint behind the fid.
struct End : fixtures::AvEndpoint {
  TcpRdmEp* rdm() const { return FidCast<TcpRdmEp>(ep); }
};

class TcpLocalPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FI_TCP_SHM");
    ASSERT_EQ(fixtures::OpenLoopbackDomain(
                  FI_EP_RDM,
                  FI_MSG | FI_TAGGED | FI_RMA | FI_SOURCE | FI_DIRECTED_RECV |
                      FI_MULTI_RECV,
                  [](fi_info* hints) {
                    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                    hints->domain_attr->mr_mode = FI_MR_PROV_KEY;
                  },
                  &loopback_),
              0);
    ASSERT_EQ(fixtures::OpenTableAv(loopback_.domain, &av_), 0);
  }

  void TearDown() override {
    for (End* end : opened_) EXPECT_EQ(fixtures::CloseAvEndpoint(end), 0);
    EXPECT_EQ(fi_close(&av_->fid), 0);
    EXPECT_EQ(fixtures::CloseObjects(&loopback_), 0);
    unsetenv("FI_TCP_SHM");
  }

  // Opens `end` (FI_TCP_SHM=`shm`) with its own CQ, in the AV.
  void Open(End* end, const char* shm = "1") {
    setenv("FI_TCP_SHM", shm, 1);
    opened_.push_back(end);
    ASSERT_EQ(fixtures::OpenAvEndpoint(loopback_.domain, loopback_.info, av_,
                                       {}, end),
              0);
  }

  // Reads `end`'s CQ (progressing every endpoint's) until an entry or an
  // error, or 5 s pass: 1, or the error's negative fi_errno, or -FI_EAGAIN.
  ssize_t Next(End* end, fi_cq_tagged_entry* entry) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t rc = fi_cq_read(end->cq, entry, 1);
      if (rc == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        fi_cq_readerr(end->cq, &error, 0);
        return -error.err;
      }
      if (rc != -FI_EAGAIN) return rc;
      for (End* other : opened_) fi_cq_read(other->cq, nullptr, 0);
    }
    return -FI_EAGAIN;
  }

  // Opens `end` (FI_TCP_SHM=1) with its own CQ for `cq_flags` and a new
  // counter, *cntr, for `cntr_flags`; the test closes the counter after
  // the endpoint.
  void OpenCounted(End* end, uint64_t cq_flags, uint64_t cntr_flags,
                   fid_cntr** cntr) {
    setenv("FI_TCP_SHM", "1", 1);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(loopback_.domain, &cq_attr, &end->cq, nullptr), 0);
    fi_cntr_attr cntr_attr = {};
    ASSERT_EQ(fi_cntr_open(loopback_.domain, &cntr_attr, cntr, nullptr), 0);
    ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &end->ep, nullptr),
              0);
    opened_.push_back(end);
    ASSERT_EQ(fi_ep_bind(end->ep, &av_->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(end->ep, &end->cq->fid, cq_flags), 0);
    ASSERT_EQ(fi_ep_bind(end->ep, &(*cntr)->fid, cntr_flags), 0);
    ASSERT_EQ(fi_enable(end->ep), 0);
    ASSERT_NE(end->rdm()->local_path, nullptr);
  }

  // The shm endpoint `from` sends to `to` through, or null (TCP).
  static fid_ep* PathTo(End* from, const End& to) {
    TcpLocalPath* local = from->rdm()->local_path.get();
    return local != nullptr ? local->Via(to.addr) : nullptr;
  }

  fixtures::Objects loopback_;
  fid_av* av_ = nullptr;
  End a_, b_, c_;  // the tests' endpoints, closed by TearDown once opened
  std::vector<End*> opened_;
};

TEST_F(TcpLocalPathTest, PeersOnThisHostGoThroughShm) {
  End &a = a_, &b = b_;
  Open(&a);
  Open(&b);
  char in[16] = {};
  ASSERT_EQ(fi_trecv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, 7, 0, &in),
            0);
  ASSERT_EQ(fi_tsend(a.ep, "through shm", 12, nullptr, b.addr, 7, &a), 0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Next(&a, &entry), 1);
  EXPECT_EQ(entry.op_context, &a);
  EXPECT_EQ(entry.flags, FI_SEND | FI_TAGGED);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(entry.op_context, &in);
  EXPECT_EQ(entry.tag, 7u);
  EXPECT_STREQ(in, "through shm");
  // No TCP connection was made: the message went through a's shm endpoint.
  EXPECT_NE(PathTo(&a, b), nullptr);
  EXPECT_TRUE(a.rdm()->links.all.empty());
  EXPECT_TRUE(b.rdm()->links.all.empty());

  // FI_SOURCE names the sender by tcp's fi_addr_t.
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_recv(a.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_inject(b.ep, "back", 5, a.addr), 0);
  bool received = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!received && std::chrono::steady_clock::now() < deadline) {
    ssize_t rc = fi_cq_readfrom(a.cq, &entry, 1, &source);
    ASSERT_TRUE(rc == 1 || rc == -FI_EAGAIN) << rc;
    received = rc == 1;
    fi_cq_read(b.cq, nullptr, 0);
  }
  ASSERT_TRUE(received);
  EXPECT_EQ(source, b.addr);
  EXPECT_STREQ(in, "back");
}

TEST_F(TcpLocalPathTest, RmaThroughShmUsesTcpsRegions) {
  End &a = a_, &b = b_;
  Open(&a);
  Open(&b);
  std::vector<char> target(4096, 'x');
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, target.data(), target.size(),
                      FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, nullptr),
            0);
  const std::string data(3000, 'w');
  ASSERT_EQ(fi_write(a.ep, data.data(), data.size(), nullptr, b.addr, 0,
                     fi_mr_key(mr), &a),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Next(&a, &entry), 1);
  EXPECT_EQ(entry.flags, FI_RMA | FI_WRITE);
  EXPECT_EQ(std::string(target.data(), data.size()), data);
  char back[16] = {};
  ASSERT_EQ(fi_read(a.ep, back, sizeof(back), nullptr, b.addr, 2990,
                    fi_mr_key(mr), &a),
            0);
  ASSERT_EQ(Next(&a, &entry), 1);
  EXPECT_EQ(std::string(back, sizeof(back)),
            std::string(10, 'w') + std::string(6, 'x'));
  // A wrong key is refused at the target, as over TCP.
  ASSERT_EQ(fi_write(a.ep, "z", 1, nullptr, b.addr, 0, fi_mr_key(mr) + 1, &a),
            0);
  EXPECT_EQ(Next(&a, &entry), -FI_EACCES);
  EXPECT_TRUE(a.rdm()->links.all.empty());
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpLocalPathTest, APeerWithoutShmIsReachedOverTcp) {
  End &a = a_, &b = b_;
  Open(&a);
  Open(&b, "0");  // no shm endpoint: a's first send is refused by shm
  EXPECT_EQ(b.rdm()->local_path, nullptr);
  char in[8] = {};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "tcp", 4, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_STREQ(in, "tcp");
  EXPECT_EQ(PathTo(&a, b), nullptr);
  EXPECT_EQ(a.rdm()->links.all.size(), 1u);
}

// Counters bound to tcp count what goes through shm (shm's endpoint is
// bound to them too).
TEST_F(TcpLocalPathTest, CountersCountWhatGoesThroughShm) {
  End &a = a_, &b = b_;
  fid_cntr* sent = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      OpenCounted(&a, FI_TRANSMIT | FI_RECV, FI_SEND, &sent));
  Open(&b);
  char in[8] = {};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
              0);
    ASSERT_EQ(fi_send(a.ep, "cnt", 4, nullptr, b.addr, nullptr), 0);
  }
  fi_cq_tagged_entry entry;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Next(&b, &entry), 1);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Next(&a, &entry), 1);
  EXPECT_EQ(fi_cntr_read(sent), 3u);
  EXPECT_NE(PathTo(&a, b), nullptr);
  EXPECT_TRUE(a.rdm()->links.all.empty());
  // Closed before the counter it counts into (TearDown closes the rest).
  EXPECT_EQ(fi_close(&a.ep->fid), 0);
  a.ep = nullptr;
  EXPECT_EQ(fi_close(&sent->fid), 0);
}

// A receiver with a receive counter and no receive CQ counts the small
// messages that arrive through shm (there is no entry to write).
TEST_F(TcpLocalPathTest, AReceiverWithOnlyACounterCountsWhatComesThroughShm) {
  End &a = a_, &b = b_;
  fid_cntr* received = nullptr;
  ASSERT_NO_FATAL_FAILURE(OpenCounted(&a, FI_TRANSMIT, FI_RECV, &received));
  char name[64];
  size_t len = sizeof(name);
  ASSERT_EQ(fi_getname(&a.ep->fid, name, &len), 0);
  ASSERT_EQ(fi_av_insert(av_, name, 1, &a.addr, 0, nullptr), 1);
  Open(&b);
  char in[3][8] = {};
  for (auto& buffer : in) {
    ASSERT_EQ(
        fi_recv(a.ep, buffer, sizeof(buffer), nullptr, FI_ADDR_UNSPEC, nullptr),
        0);
    ASSERT_EQ(fi_send(b.ep, "cnt", 4, nullptr, a.addr, nullptr), 0);
  }
  fi_cq_tagged_entry entry;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Next(&b, &entry), 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (fi_cntr_read(received) < 3 &&
         std::chrono::steady_clock::now() < deadline) {
    fi_cq_read(a.cq, nullptr, 0);
  }
  EXPECT_EQ(fi_cntr_read(received), 3u);
  for (const auto& buffer : in) EXPECT_STREQ(buffer, "cnt");
  EXPECT_NE(PathTo(&b, a), nullptr);
  // Closed before the counter it counts into (TearDown closes the rest).
  EXPECT_EQ(fi_close(&a.ep->fid), 0);
  a.ep = nullptr;
  EXPECT_EQ(fi_close(&received->fid), 0);
}

// Default operation flags set after fi_enable reach the local path too:
// with FI_SELECTIVE_COMPLETION, fi_send writes a completion only once
// FI_SETOPSFLAG made FI_COMPLETION the default.
TEST_F(TcpLocalPathTest, OpsFlagsSetAfterEnableApplyThroughShm) {
  End &a = a_, &b = b_;
  setenv("FI_TCP_SHM", "1", 1);
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  ASSERT_EQ(fi_cq_open(loopback_.domain, &cq_attr, &a.cq, nullptr), 0);
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &a.ep, nullptr), 0);
  opened_.push_back(&a);
  ASSERT_EQ(fi_ep_bind(a.ep, &av_->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(a.ep, &a.cq->fid,
                       FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION),
            0);
  ASSERT_EQ(fi_enable(a.ep), 0);
  Open(&b);
  ASSERT_NE(a.rdm()->local_path, nullptr);
  char in[8] = {};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
              0);
  }
  fi_cq_tagged_entry entry;
  ASSERT_EQ(fi_send(a.ep, "one", 4, nullptr, b.addr, &a), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(fi_cq_read(a.cq, &entry, 1), -FI_EAGAIN);  // selective: none
  uint64_t flags = FI_TRANSMIT | FI_COMPLETION;
  ASSERT_EQ(fi_control(&a.ep->fid, FI_SETOPSFLAG, &flags), 0);
  ASSERT_EQ(fi_send(a.ep, "two", 4, nullptr, b.addr, &a), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  ASSERT_EQ(Next(&a, &entry), 1);
  EXPECT_EQ(entry.op_context, &a);
  EXPECT_NE(PathTo(&a, b), nullptr);
}

// b's receives, posted in order, take messages from a (through shm) and c
// (over TCP) in arrival order whichever path they came by; one
// FI_MULTI_RECV buffer takes messages from both.
TEST_F(TcpLocalPathTest, OneReceiveQueueAcrossBothPaths) {
  End &a = a_, &b = b_, &c = c_;
  Open(&a);
  Open(&b);
  Open(&c, "0");
  char bufs[4][8] = {};
  for (auto& buf : bufs) {
    ASSERT_EQ(fi_trecv(b.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, 0,
                       ~0ull, buf),
              0);
  }
  fi_cq_tagged_entry entry;
  const std::pair<End*, const char*> sends[] = {
      {&a, "shm-1"}, {&c, "tcp-1"}, {&a, "shm-2"}, {&c, "tcp-2"}};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(fi_tsend(sends[i].first->ep, sends[i].second, 6, nullptr, b.addr,
                       i, nullptr),
              0);
    ASSERT_EQ(Next(sends[i].first, &entry), 1);
    // Delivered before the next goes: arrival order is sending order.
    ASSERT_EQ(Next(&b, &entry), 1);
    EXPECT_EQ(entry.op_context, bufs[i]);
    EXPECT_EQ(entry.tag, i);
    EXPECT_STREQ(bufs[i], sends[i].second);
  }
  EXPECT_NE(PathTo(&a, b), nullptr);
  EXPECT_EQ(PathTo(&c, b), nullptr);

  // Directed receives: each takes only its source's message.
  char from_c[8] = {}, from_a[8] = {};
  ASSERT_EQ(fi_recv(b.ep, from_c, sizeof(from_c), nullptr, c.addr, from_c), 0);
  ASSERT_EQ(fi_recv(b.ep, from_a, sizeof(from_a), nullptr, a.addr, from_a), 0);
  ASSERT_EQ(fi_send(a.ep, "a", 2, nullptr, b.addr, nullptr), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(entry.op_context, from_a);
  ASSERT_EQ(fi_send(c.ep, "c", 2, nullptr, b.addr, nullptr), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(entry.op_context, from_c);

  // FI_MULTI_RECV: one 64-byte buffer, messages from both paths.
  size_t min_free = 16;
  ASSERT_EQ(fi_setopt(&b.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &min_free, sizeof(min_free)),
            0);
  char multi[64] = {};
  iovec iov = {multi, sizeof(multi)};
  fi_msg msg = {};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = FI_ADDR_UNSPEC;
  msg.context = multi;
  ASSERT_EQ(fi_recvmsg(b.ep, &msg, FI_MULTI_RECV), 0);
  ASSERT_EQ(fi_send(a.ep, "first-from-a", 13, nullptr, b.addr, nullptr), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(entry.buf, multi);
  ASSERT_EQ(fi_send(c.ep, "then-from-c", 12, nullptr, b.addr, nullptr), 0);
  ASSERT_EQ(Next(&b, &entry), 1);
  EXPECT_EQ(entry.buf, multi + 13);
  EXPECT_STREQ(multi, "first-from-a");
  EXPECT_STREQ(multi + 13, "then-from-c");
}

// Endpoints in the other address formats take the local path too (shm's
// endpoint uses the tcp endpoint's format). Parameter: the format and the
// loopback node.
class TcpLocalPathFormatTest
    : public ::testing::TestWithParam<std::pair<uint32_t, const char*>> {};

TEST_P(TcpLocalPathFormatTest, EndpointsGoThroughShm) {
  unsetenv("FI_TCP_SHM");
  const auto [format, node] = GetParam();
  fixtures::Objects loopback;
  int rc = fixtures::OpenLoopbackDomainAt(
      node, FI_EP_RDM, FI_MSG | FI_SOURCE,
      [format = format](fi_info* hints) { hints->addr_format = format; },
      &loopback);
  if (rc == -FI_ENODATA && format == FI_SOCKADDR_IN6) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  ASSERT_EQ(rc, 0);
  fid_av* av = nullptr;
  ASSERT_EQ(fixtures::OpenTableAv(loopback.domain, &av), 0);
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(loopback.domain, &cq_attr, &cq, nullptr), 0);
  fid_ep* ends[2] = {};
  fi_addr_t addrs[2] = {};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fixtures::OpenBoundEndpoint(loopback.domain, loopback.info, av,
                                          cq, &ends[i]),
              0);
    char name[128] = {};
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&ends[i]->fid, name, &len), 0);
    ASSERT_EQ(fi_av_insert(av, name, 1, &addrs[i], 0, nullptr), 1);
  }
  auto* sender = FidCast<TcpRdmEp>(ends[0]);
  ASSERT_NE(sender->local_path, nullptr);
  char in[8] = {};
  ASSERT_EQ(fi_recv(ends[1], in, sizeof(in), nullptr, FI_ADDR_UNSPEC, in), 0);
  ASSERT_EQ(fi_inject(ends[0], "fmt", 4, addrs[1]), 0);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  ssize_t read = -FI_EAGAIN;
  for (int i = 0; i < 1000000 && read == -FI_EAGAIN; ++i) {
    read = fi_cq_readfrom(cq, &entry, 1, &source);
  }
  ASSERT_EQ(read, 1);
  EXPECT_STREQ(in, "fmt");
  EXPECT_EQ(source, addrs[0]);
  EXPECT_NE(sender->local_path->Via(addrs[1]), nullptr);
  EXPECT_TRUE(sender->links.all.empty());
  for (fid_ep* ep : ends) EXPECT_EQ(fi_close(&ep->fid), 0);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&av->fid), 0);
  EXPECT_EQ(fixtures::CloseObjects(&loopback), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, TcpLocalPathFormatTest,
    ::testing::Values(
        std::pair<uint32_t, const char*>{FI_ADDR_STR, "127.0.0.1"},
        std::pair<uint32_t, const char*>{FI_SOCKADDR_IN6, "::1"}));

}  // namespace
}  // namespace tcp
}  // namespace fabric

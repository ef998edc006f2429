// RDM endpoints over MSG endpoints (rxm_ep.h), run here over tcp's MSG
// endpoints on 127.0.0.1 (the verbs provider runs the same over RC queue
// pairs): two endpoints, each with its own fabric and domain, reach each
// other through their AVs; messages and tagged messages keep their order,
// report their source, and arrive intact up to 8 MiB; RMA reaches the
// peer's registered memory; two endpoints that send to each other at once
// keep both connections; a peer that is gone fails the transmit.
#include "fabric/providers/rxm/rxm_ep.h"

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace fabric {
namespace rxm {
namespace {

fi_info* TcpInfo(fi_ep_type type, const char* service = "0") {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = type;
  hints->caps = type == FI_EP_RDM ? FI_MSG | FI_TAGGED | FI_RMA | FI_SOURCE |
                                        FI_DIRECTED_RECV
                                  : FI_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), "127.0.0.1", service, FI_SOURCE,
                      hints, &info);
  fi_freeinfo(hints);
  return rc == 0 ? info : nullptr;
}

struct Completion {
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_NOTAVAIL;
};

// The RDM side's objects (info: its RDM info), and the MSG info its
// connections open from.
struct Side : fixtures::Objects {
  fi_info* msg_info = nullptr;
  std::vector<char> region = std::vector<char>(1 << 16);
  fi_addr_t peer = FI_ADDR_NOTAVAIL;
  // Read from the CQ, not yet taken by the test.
  std::deque<Completion> completions;
  std::deque<int> errors;

  // On 127.0.0.1, at `service` ("0": a port the provider picks).
  void Open(const char* service = "0") {
    info = TcpInfo(FI_EP_RDM, service);
    msg_info = TcpInfo(FI_EP_MSG, service);
    ASSERT_NE(info, nullptr);
    ASSERT_NE(msg_info, nullptr);
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    fi_av_attr av_attr = {};
    av_attr.type = FI_AV_TABLE;
    ASSERT_EQ(fi_av_open(domain, &av_attr, &av, nullptr), 0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 1024;
    cq_attr.wait_obj = FI_WAIT_UNSPEC;  // fi_cq_sread can block
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &cq, nullptr), 0);
    ASSERT_EQ(OpenRxmEp(domain, info, *msg_info, &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(ep), 0);
    ASSERT_EQ(fi_mr_reg(domain, region.data(), region.size(),
                        FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                        nullptr),
              0);
  }

  void Close() {
    EXPECT_EQ(fixtures::CloseObjects(this), 0);
    fi_freeinfo(msg_info);
    msg_info = nullptr;
  }

  std::vector<char> Name() const {
    std::vector<char> name(128);
    size_t len = name.size();
    EXPECT_EQ(fi_getname(&ep->fid, name.data(), &len), 0);
    name.resize(len);
    return name;
  }
};

class RxmEpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(a_.Open());
    ASSERT_NO_FATAL_FAILURE(b_.Open());
    std::vector<char> a_name = a_.Name();
    std::vector<char> b_name = b_.Name();
    ASSERT_EQ(fi_av_insert(a_.av, b_name.data(), 1, &a_.peer, 0, nullptr), 1);
    ASSERT_EQ(fi_av_insert(b_.av, a_name.data(), 1, &b_.peer, 0, nullptr), 1);
  }
  void TearDown() override {
    a_.Close();
    b_.Close();
  }

  // Reads what `side`'s CQ holds into its queues (a read advances its
  // progress).
  void Poll(Side* side) {
    for (;;) {
      Completion done;
      ssize_t n = fi_cq_readfrom(side->cq, &done.entry, 1, &done.source);
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        fi_cq_readerr(side->cq, &error, 0);
        side->errors.push_back(error.err);
        continue;
      }
      if (n != 1) return;
      side->completions.push_back(done);
    }
  }

  // The next completion of `side`, advancing both sides, within 10 s;
  // its source in *source. An error entry fails the test.
  fi_cq_tagged_entry Wait(Side* side, fi_addr_t* source = nullptr) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      Poll(&a_);
      Poll(&b_);
      if (!side->errors.empty()) {
        ADD_FAILURE() << "error entry: " << fi_strerror(side->errors.front());
        side->errors.clear();
      }
      if (!side->completions.empty()) {
        Completion done = side->completions.front();
        side->completions.pop_front();
        if (source != nullptr) *source = done.source;
        return done.entry;
      }
    }
    ADD_FAILURE() << "no completion within 10 s";
    return fi_cq_tagged_entry{};
  }

  // The next error entry of `side`, advancing both sides, within 10 s.
  int WaitError(Side* side) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      Poll(side);
      EXPECT_TRUE(side->completions.empty())
          << "a completion where an error was expected";
      if (!side->errors.empty()) return side->errors.front();
    }
    return 0;
  }

  Side a_;
  Side b_;
};

TEST_F(RxmEpTest, MessagesKeepTheirOrderAndSayWhereTheyCameFrom) {
  char in[3][32] = {};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(fi_recv(b_.ep, in[i], sizeof(in[i]), nullptr, FI_ADDR_UNSPEC,
                      &in[i]),
              0);
  }
  // Each send's buffer stays as it is until the send completes.
  std::string out[3];
  for (int i = 0; i < 3; ++i) {
    out[i] = "message " + std::to_string(i);
    ASSERT_EQ(fi_send(a_.ep, out[i].c_str(), out[i].size() + 1, nullptr,
                      a_.peer, nullptr),
              0);
  }
  for (int i = 0; i < 3; ++i) {
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    fi_cq_tagged_entry entry = Wait(&b_, &source);
    EXPECT_EQ(entry.op_context, &in[i]);
    EXPECT_EQ(source, b_.peer);
    EXPECT_STREQ(in[i], ("message " + std::to_string(i)).c_str());
  }
  for (int i = 0; i < 3; ++i) Wait(&a_);  // the sends
  // And back, on the connection a made.
  char reply[16] = {};
  ASSERT_EQ(fi_recv(a_.ep, reply, sizeof(reply), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(b_.ep, "back", 5, nullptr, b_.peer, nullptr), 0);
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  Wait(&a_, &source);
  EXPECT_EQ(source, a_.peer);
  EXPECT_STREQ(reply, "back");
}

TEST_F(RxmEpTest, TaggedAndLargeMessagesArriveIntact) {
  std::vector<char> big(8 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31);
  std::vector<char> into(big.size());
  char small[8] = {};
  ASSERT_EQ(fi_trecv(b_.ep, into.data(), into.size(), nullptr, FI_ADDR_UNSPEC,
                     0x77, 0, nullptr),
            0);
  ASSERT_EQ(fi_trecv(b_.ep, small, sizeof(small), nullptr, FI_ADDR_UNSPEC,
                     0x11, 0, nullptr),
            0);
  // The small one first, to the second receive: tags choose.
  ASSERT_EQ(fi_tsend(a_.ep, "tiny", 5, nullptr, a_.peer, 0x11, nullptr), 0);
  ASSERT_EQ(fi_tsend(a_.ep, big.data(), big.size(), nullptr, a_.peer, 0x77,
                     nullptr),
            0);
  fi_cq_tagged_entry first = Wait(&b_);
  EXPECT_EQ(first.tag, 0x11u);
  EXPECT_STREQ(small, "tiny");
  fi_cq_tagged_entry second = Wait(&b_);
  EXPECT_EQ(second.tag, 0x77u);
  EXPECT_EQ(second.len, big.size());
  EXPECT_TRUE(into == big);
}

TEST_F(RxmEpTest, RmaReachesThePeersRegisteredMemory) {
  memcpy(b_.region.data() + 100, "the peer's bytes", 17);
  uint64_t key = fi_mr_key(b_.mr);
  uint64_t base = reinterpret_cast<uintptr_t>(b_.region.data());
  if ((b_.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) == 0) base = 0;
  char got[17] = {};
  ASSERT_EQ(fi_read(a_.ep, got, sizeof(got), nullptr, a_.peer, base + 100,
                    key, nullptr),
            0);
  Wait(&a_);
  EXPECT_STREQ(got, "the peer's bytes");
  ASSERT_EQ(fi_write(a_.ep, "written", 8, nullptr, a_.peer, base + 200, key,
                     nullptr),
            0);
  Wait(&a_);
  EXPECT_STREQ(b_.region.data() + 200, "written");
}

TEST_F(RxmEpTest, EndpointsThatSendToEachOtherAtOnceKeepBothConnections) {
  char a_in[8] = {};
  char b_in[8] = {};
  ASSERT_EQ(fi_recv(a_.ep, a_in, sizeof(a_in), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_recv(b_.ep, b_in, sizeof(b_in), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, "from a", 7, nullptr, a_.peer, nullptr), 0);
  ASSERT_EQ(fi_send(b_.ep, "from b", 7, nullptr, b_.peer, nullptr), 0);
  int a_done = 0;
  int b_done = 0;
  while (a_done < 2) {
    Wait(&a_);
    ++a_done;
  }
  while (b_done < 2) {
    Wait(&b_);
    ++b_done;
  }
  EXPECT_STREQ(a_in, "from b");
  EXPECT_STREQ(b_in, "from a");
}

TEST_F(RxmEpTest, ManyMessagesEachWayKeepTheirOrder) {
  constexpr int kCount = 5000;
  std::vector<uint32_t> in(kCount, 0);
  std::vector<uint32_t> out(kCount);
  int posted = 0;
  int sent = 0;
  int received = 0;
  int completed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (received < kCount || completed < kCount) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    // Receives and sends go in as the queues take them (-FI_EAGAIN: later).
    while (posted < kCount &&
           fi_recv(b_.ep, &in[posted], sizeof(uint32_t), nullptr,
                   FI_ADDR_UNSPEC, nullptr) == 0) {
      ++posted;
    }
    while (sent < kCount) {
      out[sent] = static_cast<uint32_t>(sent);
      if (fi_send(a_.ep, &out[sent], sizeof(uint32_t), nullptr, a_.peer,
                  nullptr) != 0) {
        break;
      }
      ++sent;
    }
    Poll(&a_);
    Poll(&b_);
    ASSERT_TRUE(a_.errors.empty() && b_.errors.empty());
    received += static_cast<int>(b_.completions.size());
    completed += static_cast<int>(a_.completions.size());
    b_.completions.clear();
    a_.completions.clear();
  }
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(in[i], static_cast<uint32_t>(i));
}

TEST_F(RxmEpTest, APeerThatCloses) {
  char in[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, "first", 6, nullptr, a_.peer, nullptr), 0);
  Wait(&b_);
  Wait(&a_);
  // b goes away; a's next transmits fail (the connection broke, or a new
  // one is refused), and a stays usable.
  b_.Close();
  int failed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (failed == 0 && std::chrono::steady_clock::now() < deadline) {
    ssize_t rc = fi_send(a_.ep, "again", 6, nullptr, a_.peer, nullptr);
    if (rc < 0 && rc != -FI_EAGAIN) ++failed;
    Poll(&a_);
    failed += static_cast<int>(a_.errors.size());
    a_.completions.clear();
  }
  EXPECT_GT(failed, 0);
}

TEST_F(RxmEpTest, ABlockedReaderWakesForANewPeersMessage) {
  char in[16] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  // a connects and sends from another thread while b sleeps in its CQ:
  // b's wait must wake for the connection request, then the data.
  std::thread sender([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(fi_send(a_.ep, "wake up", 8, nullptr, a_.peer, nullptr), 0);
    fi_cq_tagged_entry entry;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (fi_cq_read(a_.cq, &entry, 1) != 1 &&
           std::chrono::steady_clock::now() < deadline) {
    }
  });
  fi_cq_tagged_entry entry = {};
  ssize_t n = fi_cq_sread(b_.cq, &entry, 1, nullptr, 5000);
  sender.join();
  ASSERT_EQ(n, 1);
  EXPECT_STREQ(in, "wake up");
}

TEST_F(RxmEpTest, WhatWasSentArrivesThoughTheSenderClosesAtOnce) {
  char in[16] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, "last words", 11, nullptr, a_.peer, nullptr), 0);
  Wait(&a_);
  a_.Close();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (b_.completions.empty() &&
         std::chrono::steady_clock::now() < deadline) {
    Poll(&b_);
  }
  ASSERT_EQ(b_.completions.size(), 1u);
  EXPECT_STREQ(in, "last words");
}

TEST_F(RxmEpTest, AnEndpointOnAPortOfItsOwnChoiceConnectsToo) {
  // Its connections come from other ports than the one it listens on.
  Side fixed;
  std::string port = std::to_string(20000 + getpid() % 20000);
  ASSERT_NO_FATAL_FAILURE(fixed.Open(port.c_str()));
  std::vector<char> b_name = b_.Name();
  ASSERT_EQ(fi_av_insert(fixed.av, b_name.data(), 1, &fixed.peer, 0, nullptr),
            1);
  char in[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_send(fixed.ep, "fixed", 6, nullptr, fixed.peer, nullptr), 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (b_.completions.empty() &&
         std::chrono::steady_clock::now() < deadline) {
    Poll(&fixed);
    Poll(&b_);
  }
  EXPECT_TRUE(fixed.errors.empty());
  EXPECT_EQ(b_.completions.size(), 1u);
  EXPECT_STREQ(in, "fixed");
  fixed.Close();
}

TEST_F(RxmEpTest, BadCallsFailCleanly) {
  char name[64];
  EXPECT_EQ(fi_getname(&a_.ep->fid, name, nullptr), -FI_EINVAL);
  size_t len = 2;
  EXPECT_EQ(fi_getname(&a_.ep->fid, name, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  // The name is the passive endpoint's, chosen when the endpoint opened.
  EXPECT_EQ(fi_setname(&a_.ep->fid, name, len), -FI_EOPNOTSUPP);
  // An address the AV does not hold.
  EXPECT_LT(fi_send(a_.ep, "x", 2, nullptr, a_.peer + 100, nullptr), 0);
  // Flags the data path does not know.
  iovec iov = {name, sizeof(name)};
  fi_msg msg = {&iov, nullptr, 1, FI_ADDR_UNSPEC, nullptr, 0};
  EXPECT_EQ(fi_recvmsg(a_.ep, &msg, 1ull << 62), -FI_EBADFLAGS);
}

TEST_F(RxmEpTest, ATransmitToAPeerThatIsGoneFails) {
  b_.Close();
  ASSERT_EQ(fi_send(a_.ep, "anyone?", 8, nullptr, a_.peer, nullptr), 0);
  EXPECT_EQ(WaitError(&a_), FI_ECONNREFUSED);
}

}  // namespace
}  // namespace rxm
}  // namespace fabric

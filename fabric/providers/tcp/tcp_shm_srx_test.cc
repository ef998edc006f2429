// The larger design in one process: an RDM endpoint of one provider owns
// the receive queues (StreamEpOwnerSrx) and the CQ (UtilCqOwnerFid); an RDM
// endpoint of the other imports both (fi_srx_context and fi_cq_open with
// FI_PEER). Both ways round: tcp owner with an shm peer (what tcp's local
// path does), and shm owner with a tcp peer. The application posts on the
// owner and reads the owner's CQ only, whichever path a message takes.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_tagged.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/peer_cq.h"
#include "gtest/gtest.h"

namespace {

// One provider's domain with an AV, and endpoints on it.
struct Side {
  fabric::fixtures::Objects loopback;
  fid_av* av = nullptr;
};

struct End {
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fi_addr_t addr = FI_ADDR_NOTAVAIL;  // in its side's AV
};

// Parameter: the owner's provider ("tcp" or "shm"); the peer is the other.
class SrxOwnerPeerTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const bool tcp_owns = std::string(GetParam()) == "tcp";
    for (auto [side, provider] :
         {std::pair{&owner_side_, tcp_owns ? "tcp" : "shm"},
          std::pair{&peer_side_, tcp_owns ? "shm" : "tcp"}}) {
      ASSERT_EQ(fabric::fixtures::OpenLoopbackDomain(
                    FI_EP_RDM, FI_MSG | FI_TAGGED | FI_SOURCE,
                    [provider = provider](fi_info* hints) {
                      hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                      free(hints->fabric_attr->prov_name);
                      hints->fabric_attr->prov_name = strdup(provider);
                      hints->domain_attr->av_type = FI_AV_TABLE;
                    },
                    &side->loopback),
                0);
      if (side == &peer_side_) PreparePeerDomain(side->loopback.domain);
      if (HasFatalFailure()) return;
      ASSERT_EQ(fabric::fixtures::OpenTableAv(side->loopback.domain, &side->av),
                0);
    }
    Open(&owner_side_, &owner_, nullptr, nullptr);
    Open(&owner_side_, &owner_sender_, nullptr, nullptr);
    Open(&peer_side_, &peer_sender_, nullptr, nullptr);
    // The peer endpoint: the owner's CQ and receive queues.
    cq_context_ = {
        sizeof(cq_context_),
        fabric::UtilCqOwnerFid(fabric::FidCast<fabric::UtilCq>(owner_.cq))};
    srx_context_ = {sizeof(srx_context_),
                    fabric::stream::StreamEpOwnerSrx(
                        fabric::stream::ToStreamEp(owner_.ep))};
    fi_rx_attr rx_attr = *peer_side_.loopback.info->rx_attr;
    rx_attr.op_flags = FI_PEER;
    ASSERT_EQ(fi_srx_context(peer_side_.loopback.domain, &rx_attr, &srx_,
                             &srx_context_),
              0);
    Open(&peer_side_, &peer_, &cq_context_, srx_);
  }

  // Before anything opens on the peer's domain.
  virtual void PreparePeerDomain(fid_domain*) {}

  // Opens `end` on `side`: its CQ (a peer CQ when `cq_context`), bound to
  // the peer SRX `srx` when given, enabled, in the side's AV.
  void Open(Side* side, End* end, fi_peer_cq_context* cq_context, fid_ep* srx) {
    fid_domain* domain = side->loopback.domain;
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    if (cq_context != nullptr) cq_attr.flags = FI_PEER;
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &end->cq, cq_context), 0);
    ASSERT_EQ(fi_endpoint(domain, side->loopback.info, &end->ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(end->ep, &side->av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(end->ep, &end->cq->fid, FI_TRANSMIT | FI_RECV), 0);
    if (srx != nullptr) ASSERT_EQ(fi_ep_bind(end->ep, &srx->fid, 0), 0);
    ASSERT_EQ(fi_enable(end->ep), 0);
    char name[128];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&end->ep->fid, name, &len), 0);
    ASSERT_EQ(fi_av_insert(side->av, name, 1, &end->addr, 0, nullptr), 1);
  }

  void TearDown() override {
    // Peers before their owners (fi_peer(3)).
    for (End* end : {&peer_, &peer_sender_, &owner_sender_, &owner_}) {
      if (end->ep != nullptr) EXPECT_EQ(fi_close(&end->ep->fid), 0);
      if (end == &peer_ && srx_ != nullptr) {
        EXPECT_EQ(fi_close(&srx_->fid), 0);
      }
      if (end->cq != nullptr) EXPECT_EQ(fi_close(&end->cq->fid), 0);
    }
    for (Side* side : {&peer_side_, &owner_side_}) {
      if (side->av != nullptr) EXPECT_EQ(fi_close(&side->av->fid), 0);
      EXPECT_EQ(fabric::fixtures::CloseObjects(&side->loopback), 0);
    }
  }

  // Progresses every endpoint (senders' completions are dropped) until
  // `done` or 5 s pass.
  bool ProgressUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    fi_cq_tagged_entry ignored;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      fi_cq_read(peer_.cq, nullptr, 0);  // a peer CQ: progress only
      fi_cq_read(peer_sender_.cq, &ignored, 1);
      fi_cq_read(owner_sender_.cq, &ignored, 1);
    }
    return false;
  }

  // The owner's next completion.
  bool OwnerCompletion(fi_cq_tagged_entry* entry) {
    return ProgressUntil([&] { return fi_cq_read(owner_.cq, entry, 1) == 1; });
  }

  // Until the owner holds `count` unexpected tagged messages (its own and
  // the peer's queued ones).
  bool OwnerHolds(size_t count) {
    auto* owner = fabric::stream::ToStreamEp(owner_.ep);
    return ProgressUntil([&] {
      fi_cq_read(owner_.cq, nullptr, 0);  // nothing to read: progress
      return owner->unexpected.size() == count;
    });
  }

  Side owner_side_, peer_side_;
  End owner_, owner_sender_, peer_sender_, peer_;
  fid_ep* srx_ = nullptr;
  fi_peer_cq_context cq_context_ = {};
  fi_peer_srx_context srx_context_ = {};
};

TEST_P(SrxOwnerPeerTest, APeerMessageCompletesOnTheOwnersCq) {
  char buf[16] = {};
  int context;
  ASSERT_EQ(fi_trecv(owner_.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, 1, 0,
                     &context),
            0);
  ASSERT_EQ(
      fi_tsend(peer_sender_.ep, "via peer", 8, nullptr, peer_.addr, 1, nullptr),
      0);
  fi_cq_tagged_entry entry = {};
  ASSERT_TRUE(OwnerCompletion(&entry));
  EXPECT_EQ(entry.op_context, &context);
  EXPECT_EQ(entry.flags, FI_RECV | FI_TAGGED);
  EXPECT_EQ(entry.len, 8u);
  EXPECT_STREQ(buf, "via peer");
}

TEST_P(SrxOwnerPeerTest, AnEarlyPeerMessageWaitsForTheOwnersReceive) {
  ASSERT_EQ(
      fi_tsend(peer_sender_.ep, "early", 6, nullptr, peer_.addr, 2, nullptr),
      0);
  ASSERT_TRUE(OwnerHolds(1));
  char buf[16] = {};
  int context;
  ASSERT_EQ(fi_trecv(owner_.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, 2, 0,
                     &context),
            0);
  fi_cq_tagged_entry entry = {};
  ASSERT_TRUE(OwnerCompletion(&entry));
  EXPECT_EQ(entry.op_context, &context);
  EXPECT_EQ(entry.len, 6u);
  EXPECT_STREQ(buf, "early");
}

// An HMEM override on the peer's domain whose copies into memory fail
// (copies out of it, the sender's, work): the peer fills the owner's
// receive through it.
ssize_t CopyOut(void* dest, size_t size, fi_hmem_iface, uint64_t,
                const iovec* iov, size_t count, uint64_t offset) {
  size_t done = 0;
  for (size_t i = 0; i < count && done < size; ++i) {
    size_t skip = std::min<size_t>(offset, iov[i].iov_len);
    offset -= skip;
    size_t n = std::min(iov[i].iov_len - skip, size - done);
    memcpy(static_cast<char*>(dest) + done,
           static_cast<const char*>(iov[i].iov_base) + skip, n);
    done += n;
  }
  return static_cast<ssize_t>(done);
}
ssize_t FailCopyIn(fi_hmem_iface, uint64_t, const iovec*, size_t, uint64_t,
                   const void*, size_t) {
  return -FI_EIO;
}

class SrxOwnerPeerFailingCopyTest : public SrxOwnerPeerTest {
 protected:
  void PreparePeerDomain(fid_domain* domain) override {
    fi_hmem_override_ops ops = {sizeof(ops), CopyOut, FailCopyIn};
    ASSERT_EQ(
        fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &ops, nullptr),
        0);
  }
};

// A copy into the owner's buffer that fails fails the owner's receive
// (FI_EIO on the owner's CQ), as the peer's own receive would fail.
TEST_P(SrxOwnerPeerFailingCopyTest, FailsTheOwnersReceive) {
  char buf[16] = {};
  int context;
  ASSERT_EQ(fi_trecv(owner_.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, 4, 0,
                     &context),
            0);
  ASSERT_EQ(
      fi_tsend(peer_sender_.ep, "lost", 5, nullptr, peer_.addr, 4, nullptr), 0);
  fi_cq_err_entry error = {};
  ASSERT_TRUE(ProgressUntil([&] {
    fi_cq_tagged_entry entry;
    return fi_cq_read(owner_.cq, &entry, 1) == -FI_EAVAIL &&
           fi_cq_readerr(owner_.cq, &error, 0) == 1;
  }));
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.err, FI_EIO);
  EXPECT_EQ(error.flags & (FI_RECV | FI_TAGGED), FI_RECV | FI_TAGGED);
}

// Messages of both paths with one tag are received in arrival order.
TEST_P(SrxOwnerPeerTest, BothPathsMatchInArrivalOrder) {
  ASSERT_EQ(
      fi_tsend(owner_sender_.ep, "own", 4, nullptr, owner_.addr, 3, nullptr),
      0);
  ASSERT_TRUE(OwnerHolds(1));
  ASSERT_EQ(
      fi_tsend(peer_sender_.ep, "peer", 5, nullptr, peer_.addr, 3, nullptr), 0);
  ASSERT_TRUE(OwnerHolds(2));
  char first[8] = {}, second[8] = {};
  int contexts[2];
  ASSERT_EQ(fi_trecv(owner_.ep, first, sizeof(first), nullptr, FI_ADDR_UNSPEC,
                     3, 0, &contexts[0]),
            0);
  ASSERT_EQ(fi_trecv(owner_.ep, second, sizeof(second), nullptr, FI_ADDR_UNSPEC,
                     3, 0, &contexts[1]),
            0);
  fi_cq_tagged_entry entry = {};
  ASSERT_TRUE(OwnerCompletion(&entry));
  EXPECT_EQ(entry.op_context, &contexts[0]);
  ASSERT_TRUE(OwnerCompletion(&entry));
  EXPECT_EQ(entry.op_context, &contexts[1]);
  EXPECT_STREQ(first, "own");
  EXPECT_STREQ(second, "peer");
}

// The application posts on the owner while another thread sends to the
// peer and progresses the peer's provider: owner ops, start_tag and the
// peer CQ cross threads, messages arriving before and after their
// receives.
TEST_P(SrxOwnerPeerTest, ReceivesPostedWhileThePeerProgressesElsewhere) {
  constexpr int kMessages = 64;
  std::atomic<bool> stop{false};
  std::vector<std::string> texts;  // sent from until the sends complete
  for (int i = 0; i < kMessages; ++i) texts.push_back(std::to_string(i));
  std::thread peer_side([&] {
    fi_cq_tagged_entry ignored;
    for (int i = 0; i < kMessages; ++i) {
      while (fi_tsend(peer_sender_.ep, texts[i].c_str(), texts[i].size() + 1,
                      nullptr, peer_.addr, i, nullptr) == -FI_EAGAIN) {
        fi_cq_read(peer_sender_.cq, &ignored, 1);
      }
    }
    while (!stop.load()) {
      fi_cq_read(peer_.cq, nullptr, 0);
      fi_cq_read(peer_sender_.cq, &ignored, 1);
    }
  });
  std::vector<std::array<char, 8>> bufs(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(fi_trecv(owner_.ep, bufs[i].data(), bufs[i].size(), nullptr,
                       FI_ADDR_UNSPEC, i, 0, &bufs[i]),
              0);
  }
  int completed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (completed < kMessages && std::chrono::steady_clock::now() < deadline) {
    fi_cq_tagged_entry entry;
    if (fi_cq_read(owner_.cq, &entry, 1) != 1) continue;
    auto* buf = static_cast<std::array<char, 8>*>(entry.op_context);
    EXPECT_EQ(std::to_string(entry.tag), buf->data());
    ++completed;
  }
  stop.store(true);
  peer_side.join();
  EXPECT_EQ(completed, kMessages);
}

INSTANTIATE_TEST_SUITE_P(Owners, SrxOwnerPeerTest,
                         ::testing::Values("tcp", "shm"));
INSTANTIATE_TEST_SUITE_P(Owners, SrxOwnerPeerFailingCopyTest,
                         ::testing::Values("tcp", "shm"));

}  // namespace

// A tcp RDM endpoint as the owner of a peer SRX (srx.h), with a foreign
// peer provider played by the test: it calls the owner ops as a peer would
// when messages arrive on its side, and records start_*/discard_*.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_tagged.h>
#include <string.h>

#include <chrono>
#include <functional>
#include <set>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/stream/srx.h"
#include "gtest/gtest.h"

namespace {

// The foreign peer: the entries the owner started or discarded.
struct TestPeer {
  fi_ops_srx_peer ops = {};
  std::vector<fi_peer_rx_entry*> started;
  std::vector<fi_peer_rx_entry*> discarded;
};

TestPeer* PeerOf(fi_peer_rx_entry* entry) {
  return static_cast<TestPeer*>(entry->peer_context);
}
int RecordStart(fi_peer_rx_entry* entry) {
  PeerOf(entry)->started.push_back(entry);
  return 0;
}
int RecordDiscard(fi_peer_rx_entry* entry) {
  PeerOf(entry)->discarded.push_back(entry);
  return 0;
}

class TcpSrxOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        fabric::fixtures::OpenLoopbackDomain(
            FI_EP_RDM,
            FI_MSG | FI_TAGGED | FI_SOURCE | FI_MULTI_RECV | FI_DIRECTED_RECV,
            [](fi_info* hints) {
              hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
            },
            &loopback_),
        0);
    fid_domain* domain = loopback_.domain;
    ASSERT_EQ(fabric::fixtures::OpenTableAv(domain, &loopback_.av), 0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &loopback_.cq, nullptr), 0);
    for (fid_ep** ep : {&owner_ep_, &sender_ep_}) {
      ASSERT_EQ(fi_endpoint(domain, loopback_.info, ep, nullptr), 0);
      ASSERT_EQ(fi_ep_bind(*ep, &loopback_.av->fid, 0), 0);
      ASSERT_EQ(fi_ep_bind(*ep, &loopback_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
      ASSERT_EQ(fi_enable(*ep), 0);
    }
    char name[64];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&owner_ep_->fid, name, &len), 0);
    ASSERT_EQ(fi_av_insert(loopback_.av, name, 1, &owner_addr_, 0, nullptr), 1);
    srx_ =
        fabric::stream::StreamEpOwnerSrx(fabric::stream::ToStreamEp(owner_ep_));
    peer_.ops = {.size = sizeof(fi_ops_srx_peer),
                 .start_msg = RecordStart,
                 .start_tag = RecordStart,
                 .discard_msg = RecordDiscard,
                 .discard_tag = RecordDiscard};
    srx_->peer_ops = &peer_.ops;
  }

  void TearDown() override {
    for (fid_ep* ep : {owner_ep_, sender_ep_}) {
      EXPECT_EQ(fi_close(&ep->fid), 0);
    }
    EXPECT_EQ(fabric::fixtures::CloseObjects(&loopback_), 0);
  }

  // The peer's side of a message that finds no receive: -FI_ENOENT, then
  // queued.
  fi_peer_rx_entry* QueueTagged(uint64_t tag) {
    fi_peer_rx_entry* entry = nullptr;
    EXPECT_EQ(srx_->owner_ops->get_tag(srx_, FI_ADDR_NOTAVAIL, tag, &entry),
              -FI_ENOENT);
    entry->peer_context = &peer_;
    EXPECT_EQ(srx_->owner_ops->queue_tag(entry), 0);
    return entry;
  }

  // Posts `buf` as an FI_MULTI_RECV buffer, with FI_OPT_MIN_MULTI_RECV 16.
  void PostMultiRecv(char* buf, size_t len, void* context) {
    size_t min = 16;
    ASSERT_EQ(fi_setopt(&owner_ep_->fid, FI_OPT_ENDPOINT,
                        FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
              0);
    iovec iov = {buf, len};
    fi_msg msg = {&iov, nullptr, 1, FI_ADDR_UNSPEC, context, 0};
    ASSERT_EQ(fi_recvmsg(owner_ep_, &msg, FI_MULTI_RECV), 0);
  }

  // Reads the CQ (progressing both endpoints) until it yields an entry.
  bool ReadCq(fi_cq_tagged_entry* entry) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (fi_cq_read(loopback_.cq, entry, 1) == 1) return true;
    }
    return false;
  }

  fabric::fixtures::Objects loopback_;  // with the AV and the one CQ
  fid_ep* owner_ep_ = nullptr;
  fid_ep* sender_ep_ = nullptr;
  fi_addr_t owner_addr_ = FI_ADDR_NOTAVAIL;
  fid_peer_srx* srx_ = nullptr;
  TestPeer peer_;
};

TEST_F(TcpSrxOwnerTest, TheSrxIsAPeerSrx) {
  EXPECT_EQ(srx_->ep_fid.fid.fclass, FI_CLASS_PEER_SRX);
  ASSERT_NE(srx_->owner_ops, nullptr);
  EXPECT_EQ(srx_->owner_ops->size, sizeof(fi_ops_srx_owner));
}

TEST_F(TcpSrxOwnerTest, GetMsgLendsThePostedReceive) {
  char buf[16];
  void* desc = nullptr;
  int context;
  ASSERT_EQ(fi_recv(owner_ep_, buf, sizeof(buf), desc, FI_ADDR_UNSPEC,
                    &context),
            0);
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 6, &entry), 0);
  EXPECT_EQ(entry->srx, srx_);
  EXPECT_EQ(entry->context, &context);
  EXPECT_EQ(entry->flags, FI_RECV | FI_MSG);
  EXPECT_EQ(entry->size, 6u);
  ASSERT_EQ(entry->count, 1u);
  EXPECT_EQ(entry->iov[0].iov_base, buf);
  EXPECT_EQ(entry->iov[0].iov_len, sizeof(buf));
  EXPECT_EQ(entry->desc[0], nullptr);
  // No longer posted: neither cancellable nor lent twice.
  EXPECT_EQ(fi_cancel(&owner_ep_->fid, &context), -FI_ENOENT);
  srx_->owner_ops->free_entry(entry);
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 6, &entry),
            -FI_ENOENT);
  EXPECT_EQ(entry->size, 6u);
  EXPECT_EQ(entry->addr, FI_ADDR_NOTAVAIL);
  srx_->owner_ops->free_entry(entry);
}

// Entries are reused after free_entry; many lent at once are all distinct
// and stay usable as others are freed (more than the spares kept); an
// entry freed twice is freed once.
TEST_F(TcpSrxOwnerTest, EntriesAreDistinctWhileLentAndReusedWhenFreed) {
  constexpr int kLent = 200;
  std::vector<fi_peer_rx_entry*> lent(kLent);
  for (int i = 0; i < kLent; ++i) {
    ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, i, &lent[i]),
              -FI_ENOENT);
  }
  std::set<fi_peer_rx_entry*> distinct(lent.begin(), lent.end());
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kLent));
  // Free every other one, then check the rest still say what they were.
  for (int i = 0; i < kLent; i += 2) srx_->owner_ops->free_entry(lent[i]);
  for (int i = 1; i < kLent; i += 2) {
    EXPECT_EQ(lent[i]->size, static_cast<size_t>(i));
  }
  srx_->owner_ops->free_entry(lent[0]);  // twice: ignored
  fi_peer_rx_entry* again = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 7, &again),
            -FI_ENOENT);
  fi_peer_rx_entry* other = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 8, &other),
            -FI_ENOENT);
  EXPECT_NE(again, other);
  EXPECT_EQ(again->size, 7u);
  EXPECT_EQ(other->size, 8u);
  for (int i = 1; i < kLent; i += 2) {
    EXPECT_EQ(lent[i]->size, static_cast<size_t>(i));
    srx_->owner_ops->free_entry(lent[i]);
  }
  srx_->owner_ops->free_entry(again);
  srx_->owner_ops->free_entry(other);
}

// FI_DIRECTED_RECV: a receive for one source is lent only for its messages.
TEST_F(TcpSrxOwnerTest, ADirectedReceiveIsLentForItsSourceOnly) {
  char buf[8];
  int context;
  ASSERT_EQ(fi_recv(owner_ep_, buf, sizeof(buf), nullptr, owner_addr_,
                    &context),
            0);
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, owner_addr_ + 1, 1, &entry),
            -FI_ENOENT);
  srx_->owner_ops->free_entry(entry);
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, owner_addr_, 1, &entry), 0);
  EXPECT_EQ(entry->context, &context);
  srx_->owner_ops->free_entry(entry);
}

TEST_F(TcpSrxOwnerTest, GetTagHonorsIgnoreBits) {
  char buf[8];
  int context;
  ASSERT_EQ(fi_trecv(owner_ep_, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
                     0x10, 0x0f, &context),
            0);
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_tag(srx_, FI_ADDR_NOTAVAIL, 0x20, &entry),
            -FI_ENOENT);
  srx_->owner_ops->free_entry(entry);
  ASSERT_EQ(srx_->owner_ops->get_tag(srx_, FI_ADDR_NOTAVAIL, 0x1f, &entry), 0);
  EXPECT_EQ(entry->context, &context);
  EXPECT_EQ(entry->tag, 0x1fu);
  EXPECT_EQ(entry->flags, FI_RECV | FI_TAGGED);
  srx_->owner_ops->free_entry(entry);
}

TEST_F(TcpSrxOwnerTest, AQueuedMessageStartsWhenItsReceiveIsPosted) {
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 4, &entry),
            -FI_ENOENT);
  entry->peer_context = &peer_;
  ASSERT_EQ(srx_->owner_ops->queue_msg(entry), 0);
  EXPECT_TRUE(peer_.started.empty());
  char buf[8];
  int context;
  iovec iov = {buf, sizeof(buf)};
  fi_msg msg = {&iov, nullptr, 1, FI_ADDR_UNSPEC, &context, 0};
  ASSERT_EQ(fi_recvmsg(owner_ep_, &msg, 0), 0);
  ASSERT_EQ(peer_.started.size(), 1u);
  EXPECT_EQ(peer_.started[0], entry);
  EXPECT_EQ(entry->context, &context);
  EXPECT_EQ(entry->iov[0].iov_base, buf);
  EXPECT_EQ(fi_cancel(&owner_ep_->fid, &context), -FI_ENOENT);
  srx_->owner_ops->free_entry(entry);
  fi_cq_tagged_entry completion;
  // Nor does the peer's CQ hold one.
  EXPECT_EQ(fi_cq_read(loopback_.cq, &completion, 1), -FI_EAGAIN);
}

// A receive posted between the peer's get and its queue: queue starts it.
TEST_F(TcpSrxOwnerTest, QueueStartsAtOnceWhenAReceiveWasPostedMeanwhile) {
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_tag(srx_, FI_ADDR_NOTAVAIL, 5, &entry),
            -FI_ENOENT);
  char buf[8];
  int context;
  ASSERT_EQ(fi_trecv(owner_ep_, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, 5,
                     0, &context),
            0);
  entry->peer_context = &peer_;
  ASSERT_EQ(srx_->owner_ops->queue_tag(entry), 0);
  ASSERT_EQ(peer_.started.size(), 1u);
  EXPECT_EQ(entry->context, &context);
  srx_->owner_ops->free_entry(entry);
}

// The owner's own unexpected tagged message and the peer's queued one are
// taken by receives in arrival order, both ways round.
TEST_F(TcpSrxOwnerTest, QueuedPeerAndOwnUnexpectedMessagesMatchInOrder) {
  auto* owner = fabric::stream::ToStreamEp(owner_ep_);
  auto buffered = [&](size_t count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    fi_cq_tagged_entry ignored;
    while (owner->unexpected.size() < count &&
           std::chrono::steady_clock::now() < deadline) {
      // Sends complete: nothing to check.
      fi_cq_read(loopback_.cq, &ignored, 1);
    }
    return owner->unexpected.size() == count;
  };
  ASSERT_EQ(fi_tinject(sender_ep_, "tcp", 4, owner_addr_, 7), 0);
  ASSERT_TRUE(buffered(1));
  fi_peer_rx_entry* second = QueueTagged(7);
  fi_peer_rx_entry* third = QueueTagged(7);
  ASSERT_EQ(fi_tinject(sender_ep_, "TCP", 4, owner_addr_, 7), 0);
  ASSERT_TRUE(buffered(4));

  char buf[4][8] = {};
  int context[4];
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(fi_trecv(owner_ep_, buf[i], sizeof(buf[i]), nullptr,
                       FI_ADDR_UNSPEC, 7, 0, &context[i]),
              0);
  }
  ASSERT_EQ(peer_.started.size(), 2u);
  EXPECT_EQ(peer_.started[0], second);
  EXPECT_EQ(second->context, &context[1]);
  EXPECT_EQ(peer_.started[1], third);
  EXPECT_EQ(third->context, &context[2]);
  EXPECT_STREQ(buf[0], "tcp");
  EXPECT_STREQ(buf[3], "TCP");
  srx_->owner_ops->free_entry(second);
  srx_->owner_ops->free_entry(third);
}

TEST_F(TcpSrxOwnerTest, PeekReportsAndDiscardDropsAQueuedMessage) {
  fi_peer_rx_entry* entry = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_tag(srx_, FI_ADDR_NOTAVAIL, 9, &entry),
            -FI_ENOENT);
  entry->size = 3;
  entry->peer_context = &peer_;
  ASSERT_EQ(srx_->owner_ops->queue_tag(entry), 0);
  fi_context peek_context;
  fi_msg_tagged msg = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 9, 0,
                       &peek_context, 0};
  ASSERT_EQ(fi_trecvmsg(owner_ep_, &msg, FI_PEEK), 0);
  fi_cq_tagged_entry completion = {};
  ASSERT_TRUE(ReadCq(&completion));
  EXPECT_EQ(completion.op_context, &peek_context);
  EXPECT_EQ(completion.len, 3u);
  EXPECT_EQ(completion.tag, 9u);
  EXPECT_TRUE(peer_.discarded.empty());
  ASSERT_EQ(fi_trecvmsg(owner_ep_, &msg, FI_PEEK | FI_DISCARD), 0);
  ASSERT_EQ(peer_.discarded.size(), 1u);
  EXPECT_EQ(peer_.discarded[0], entry);
  EXPECT_TRUE(peer_.started.empty());
  srx_->owner_ops->free_entry(entry);
}

TEST_F(TcpSrxOwnerTest, AClaimedQueuedMessageStartsOrIsDiscarded) {
  fi_peer_rx_entry* kept = QueueTagged(3);
  fi_peer_rx_entry* dropped = QueueTagged(3);
  fi_context claim[2];
  char buf[8];
  iovec iov = {buf, sizeof(buf)};
  fi_cq_tagged_entry completion;
  for (fi_context& context : claim) {
    fi_msg_tagged peek = {nullptr, nullptr, 0, FI_ADDR_UNSPEC, 3, 0,
                          &context, 0};
    ASSERT_EQ(fi_trecvmsg(owner_ep_, &peek, FI_PEEK | FI_CLAIM), 0);
    ASSERT_TRUE(ReadCq(&completion));
  }
  fi_msg_tagged take = {&iov, nullptr, 1, FI_ADDR_UNSPEC, 3, 0, &claim[0], 0};
  ASSERT_EQ(fi_trecvmsg(owner_ep_, &take, FI_CLAIM), 0);
  ASSERT_EQ(peer_.started.size(), 1u);
  EXPECT_EQ(peer_.started[0], kept);
  EXPECT_EQ(kept->context, &claim[0]);
  take.context = &claim[1];
  ASSERT_EQ(fi_trecvmsg(owner_ep_, &take, FI_CLAIM | FI_DISCARD), 0);
  ASSERT_EQ(peer_.discarded.size(), 1u);
  EXPECT_EQ(peer_.discarded[0], dropped);
  srx_->owner_ops->free_entry(kept);
  srx_->owner_ops->free_entry(dropped);
}

// An FI_MULTI_RECV buffer lends its unused window and stays posted until
// less than FI_OPT_MIN_MULTI_RECV remains; that entry carries
// FI_MULTI_RECV.
TEST_F(TcpSrxOwnerTest, AMultiRecvBufferLendsItsWindows) {
  char buf[64];
  int context;
  PostMultiRecv(buf, sizeof(buf), &context);
  fi_peer_rx_entry* first = nullptr;
  fi_peer_rx_entry* second = nullptr;
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 20, &first), 0);
  EXPECT_EQ(first->iov[0].iov_base, buf);
  EXPECT_EQ(first->iov[0].iov_len, 64u);
  EXPECT_EQ(first->flags, FI_RECV | FI_MSG);
  // A queued message takes the next window when the buffer is posted
  // again; here the buffer is still posted, so get_msg finds it.
  ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 30, &second), 0);
  EXPECT_EQ(second->iov[0].iov_base, buf + 20);
  EXPECT_EQ(second->iov[0].iov_len, 44u);
  EXPECT_EQ(second->flags, FI_RECV | FI_MSG | FI_MULTI_RECV);  // 14 left
  EXPECT_EQ(second->context, &context);
  fi_peer_rx_entry* none = nullptr;
  EXPECT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, 1, &none),
            -FI_ENOENT);
  for (fi_peer_rx_entry* entry : {first, second, none}) {
    srx_->owner_ops->free_entry(entry);
  }
}

// Queued untagged messages take windows of a multi-receive buffer posted
// later, in order, until it is used up.
TEST_F(TcpSrxOwnerTest, QueuedMessagesShareAMultiRecvBuffer) {
  std::vector<fi_peer_rx_entry*> queued;
  for (size_t size : {30, 30, 30}) {
    fi_peer_rx_entry* entry = nullptr;
    ASSERT_EQ(srx_->owner_ops->get_msg(srx_, FI_ADDR_NOTAVAIL, size, &entry),
              -FI_ENOENT);
    entry->peer_context = &peer_;
    ASSERT_EQ(srx_->owner_ops->queue_msg(entry), 0);
    queued.push_back(entry);
  }
  char buf[64];
  int context;
  PostMultiRecv(buf, sizeof(buf), &context);
  ASSERT_EQ(peer_.started.size(), 2u);
  EXPECT_EQ(queued[0]->iov[0].iov_base, buf);
  EXPECT_EQ(queued[1]->iov[0].iov_base, buf + 30);
  EXPECT_EQ(queued[1]->flags & FI_MULTI_RECV, FI_MULTI_RECV);  // 4 left
  char other[8];
  ASSERT_EQ(fi_recv(owner_ep_, other, sizeof(other), nullptr, FI_ADDR_UNSPEC,
                    &context),
            0);
  ASSERT_EQ(peer_.started.size(), 3u);
  EXPECT_EQ(queued[2]->iov[0].iov_base, other);
  for (fi_peer_rx_entry* entry : queued) srx_->owner_ops->free_entry(entry);
}

}  // namespace

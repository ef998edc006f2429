// The stream data path's RDM endpoints (tcp's and shm's) as the peer of a
// peer SRX (fi_peer(3), srx.h) whose owner is a foreign provider
// played by the test: its receive queues are the test's, and the peer
// endpoint takes every buffer from them.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_tagged.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace {

// A posted receive of the test's owner.
struct OwnerRecv {
  iovec iov;
  void* context;
  bool tagged;
  uint64_t tag;
  uint64_t ignore;
};

// The foreign owner: posted receives, queued peer messages, and how many
// entries the peer gave back.
struct TestOwner {
  fid_peer_srx srx = {};  // first: owner ops recover the TestOwner from it
  fi_ops_srx_owner ops = {};
  std::deque<OwnerRecv> posted;
  std::deque<fi_peer_rx_entry*> queued;
  int freed = 0;

  // Hands `recv` to the first queued message it takes, else posts it.
  void Post(const OwnerRecv& recv) {
    for (auto it = queued.begin(); it != queued.end(); ++it) {
      fi_peer_rx_entry* entry = *it;
      if (!Takes(recv, entry->flags & FI_TAGGED, entry->tag)) continue;
      queued.erase(it);
      Fill(recv, entry);
      ASSERT_EQ(recv.tagged ? srx.peer_ops->start_tag(entry)
                            : srx.peer_ops->start_msg(entry),
                0);
      return;
    }
    posted.push_back(recv);
  }

  static bool Takes(const OwnerRecv& recv, bool tagged, uint64_t tag) {
    return recv.tagged == tagged &&
           (!tagged || ((recv.tag ^ tag) & ~recv.ignore) == 0);
  }
  static void Fill(const OwnerRecv& recv, fi_peer_rx_entry* entry) {
    *static_cast<iovec*>(entry->owner_context) = recv.iov;
    entry->iov = static_cast<iovec*>(entry->owner_context);
    entry->count = 1;
    entry->context = recv.context;
  }
};

TestOwner* OwnerOf(fid_peer_srx* srx) {
  return reinterpret_cast<TestOwner*>(srx);
}

int Get(fid_peer_srx* srx, fi_addr_t addr, size_t size, bool tagged,
        uint64_t tag, fi_peer_rx_entry** out) {
  TestOwner* owner = OwnerOf(srx);
  auto* entry = new fi_peer_rx_entry{};
  entry->owner_context = new iovec{};
  entry->srx = srx;
  entry->addr = addr;
  entry->size = size;
  entry->tag = tag;
  entry->flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
  *out = entry;
  for (auto it = owner->posted.begin(); it != owner->posted.end(); ++it) {
    if (!TestOwner::Takes(*it, tagged, tag)) continue;
    TestOwner::Fill(*it, entry);
    owner->posted.erase(it);
    return 0;
  }
  return -FI_ENOENT;
}
int GetMsg(fid_peer_srx* srx, fi_addr_t addr, size_t size,
           fi_peer_rx_entry** entry) {
  return Get(srx, addr, size, false, 0, entry);
}
int GetTag(fid_peer_srx* srx, fi_addr_t addr, uint64_t tag,
           fi_peer_rx_entry** entry) {
  return Get(srx, addr, 0, true, tag, entry);
}
int Queue(fi_peer_rx_entry* entry) {
  OwnerOf(entry->srx)->queued.push_back(entry);
  return 0;
}
void Free(fi_peer_rx_entry* entry) {
  ++OwnerOf(entry->srx)->freed;
  delete static_cast<iovec*>(entry->owner_context);
  delete entry;
}

// Parameter: the provider of the peer endpoint ("tcp" or "shm").
class SrxPeerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    owner_.srx.ep_fid.fid.fclass = FI_CLASS_PEER_SRX;
    owner_.ops = {.size = sizeof(fi_ops_srx_owner),
                  .get_msg = GetMsg,
                  .get_tag = GetTag,
                  .queue_msg = Queue,
                  .queue_tag = Queue,
                  .free_entry = Free};
    owner_.srx.owner_ops = &owner_.ops;
    std::string provider = GetParam();
    ASSERT_EQ(fabric::fixtures::OpenLoopbackDomain(
                  FI_EP_RDM, FI_MSG | FI_TAGGED | FI_SOURCE,
                  [provider](fi_info* hints) {
                    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                    free(hints->fabric_attr->prov_name);
                    hints->fabric_attr->prov_name = strdup(provider.c_str());
                    hints->domain_attr->av_type = FI_AV_TABLE;
                  },
                  &loopback_),
              0);
    fid_domain* domain = loopback_.domain;
    ASSERT_EQ(fabric::fixtures::OpenTableAv(domain, &loopback_.av), 0);
    context_ = {sizeof(context_), &owner_.srx};
    fi_rx_attr rx_attr = *loopback_.info->rx_attr;
    rx_attr.op_flags = FI_PEER;
    ASSERT_EQ(fi_srx_context(domain, &rx_attr, &srx_ep_, &context_), 0);
    ASSERT_NE(owner_.srx.peer_ops, nullptr);
    for (fabric::fixtures::AvEndpoint* end : {&peer_, &sender_}) {
      fi_cq_attr cq_attr = {};
      cq_attr.format = FI_CQ_FORMAT_TAGGED;
      ASSERT_EQ(fi_cq_open(domain, &cq_attr, &end->cq, nullptr), 0);
      ASSERT_EQ(fi_endpoint(domain, loopback_.info, &end->ep, nullptr), 0);
      ASSERT_EQ(fi_ep_bind(end->ep, &loopback_.av->fid, 0), 0);
      ASSERT_EQ(fi_ep_bind(end->ep, &end->cq->fid, FI_TRANSMIT | FI_RECV), 0);
    }
    ASSERT_EQ(fi_ep_bind(peer_.ep, &srx_ep_->fid, 0), 0);
    for (fabric::fixtures::AvEndpoint* end : {&peer_, &sender_}) {
      ASSERT_EQ(fi_enable(end->ep), 0);
      char name[128];
      size_t len = sizeof(name);
      ASSERT_EQ(fi_getname(&end->ep->fid, name, &len), 0);
      ASSERT_EQ(fi_av_insert(loopback_.av, name, 1, &end->addr, 0, nullptr), 1);
    }
  }

  void TearDown() override {
    EXPECT_EQ(fabric::fixtures::CloseAvEndpoint(&peer_), 0);
    EXPECT_EQ(fabric::fixtures::CloseAvEndpoint(&sender_), 0);
    if (srx_ep_ != nullptr) {
      EXPECT_EQ(fi_close(&srx_ep_->fid), 0);
    }
    EXPECT_EQ(fabric::fixtures::CloseObjects(&loopback_), 0);
    EXPECT_TRUE(owner_.queued.empty());
  }

  // Progresses both endpoints until `done` or 5 s.
  bool ProgressUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      if (done()) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      fi_cq_read(sender_.cq, nullptr, 0);
      fi_cq_read(peer_.cq, nullptr, 0);
    }
  }

  // The next completion of the peer endpoint.
  bool PeerCompletion(fi_cq_tagged_entry* entry, fi_addr_t* source) {
    return ProgressUntil(
        [&] { return fi_cq_readfrom(peer_.cq, entry, 1, source) == 1; });
  }

  // Expects the peer's completion `entry` from the sender: a receive with
  // `context` and `flags` of `text` into `buf`.
  void ExpectReceived(const fi_cq_tagged_entry& entry, fi_addr_t source,
                      void* context, uint64_t flags, const char* text,
                      const char* buf) {
    EXPECT_EQ(entry.op_context, context);
    EXPECT_EQ(entry.flags, flags);
    EXPECT_EQ(entry.len, strlen(text) + 1);
    EXPECT_EQ(source, sender_.addr);
    EXPECT_STREQ(buf, text);
  }

  // The sender's next transmit completion.
  bool SenderCompletion() {
    fi_cq_tagged_entry entry;
    return ProgressUntil(
        [&] { return fi_cq_read(sender_.cq, &entry, 1) == 1; });
  }

  TestOwner owner_;
  fi_peer_srx_context context_ = {};
  fabric::fixtures::Objects loopback_;
  fid_ep* srx_ep_ = nullptr;
  // The endpoint on the owner's receive context, and one that sends to it.
  fabric::fixtures::AvEndpoint peer_;
  fabric::fixtures::AvEndpoint sender_;
};

TEST_P(SrxPeerTest, AMessageLandsInTheOwnersPostedReceive) {
  char buf[16] = {};
  int context;
  owner_.Post({{buf, sizeof(buf)}, &context, false, 0, 0});
  ASSERT_EQ(fi_send(sender_.ep, "hello", 6, nullptr, peer_.addr, nullptr), 0);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_UNSPEC;
  ASSERT_TRUE(PeerCompletion(&entry, &source));
  ExpectReceived(entry, source, &context, FI_RECV | FI_MSG, "hello", buf);
  EXPECT_EQ(owner_.freed, 1);
}

TEST_P(SrxPeerTest, AnEarlyMessageWaitsForTheOwnersReceive) {
  ASSERT_EQ(fi_send(sender_.ep, "early", 6, nullptr, peer_.addr, nullptr), 0);
  ASSERT_TRUE(ProgressUntil([&] { return owner_.queued.size() == 1; }));
  EXPECT_EQ(owner_.queued[0]->size, 6u);
  EXPECT_EQ(owner_.queued[0]->addr, sender_.addr);
  // The stream goes on meanwhile: a later message lands in its receive.
  char second[8] = {};
  int second_context;
  owner_.Post({{second, sizeof(second)}, &second_context, true, 2, 0});
  ASSERT_EQ(fi_tsend(sender_.ep, "later", 6, nullptr, peer_.addr, 2, nullptr),
            0);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source;
  ASSERT_TRUE(PeerCompletion(&entry, &source));
  EXPECT_EQ(entry.op_context, &second_context);
  EXPECT_STREQ(second, "later");

  char buf[8] = {};
  int context;
  owner_.Post({{buf, sizeof(buf)}, &context, false, 0, 0});  // start_msg
  ASSERT_TRUE(PeerCompletion(&entry, &source));
  ExpectReceived(entry, source, &context, FI_RECV | FI_MSG, "early", buf);
  EXPECT_EQ(owner_.freed, 2);
}

TEST_P(SrxPeerTest, TaggedMessagesMatchWithIgnoreBitsBothWays) {
  char first[8] = {}, second[8] = {};
  int first_context, second_context;
  owner_.Post({{first, sizeof(first)}, &first_context, true, 0x100, 0xff});
  ASSERT_EQ(fi_tsend(sender_.ep, "one", 4, nullptr, peer_.addr, 0x1ab, nullptr),
            0);
  ASSERT_EQ(fi_tsend(sender_.ep, "two", 4, nullptr, peer_.addr, 0x2ab, nullptr),
            0);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source;
  ASSERT_TRUE(PeerCompletion(&entry, &source));
  EXPECT_EQ(entry.op_context, &first_context);
  EXPECT_EQ(entry.flags, FI_RECV | FI_TAGGED);
  EXPECT_EQ(entry.tag, 0x1abu);
  EXPECT_STREQ(first, "one");
  ASSERT_TRUE(ProgressUntil([&] { return owner_.queued.size() == 1; }));
  EXPECT_EQ(owner_.queued[0]->tag, 0x2abu);
  owner_.Post({{second, sizeof(second)}, &second_context, true, 0x200, 0xff});
  ASSERT_TRUE(PeerCompletion(&entry, &source));
  EXPECT_EQ(entry.op_context, &second_context);
  EXPECT_EQ(entry.tag, 0x2abu);
  EXPECT_STREQ(second, "two");
  EXPECT_EQ(owner_.freed, 2);
}

// A discarded message completes nothing at the peer, but its sender's
// FI_DELIVERY_COMPLETE send completes.
TEST_P(SrxPeerTest, ADiscardedMessageCompletesOnlyAtTheSender) {
  iovec iov = {const_cast<char*>("drop"), 5};
  fi_msg_tagged msg = {&iov, nullptr, 1, peer_.addr, 9, 0, nullptr, 0};
  ASSERT_EQ(fi_tsendmsg(sender_.ep, &msg, FI_DELIVERY_COMPLETE), 0);
  ASSERT_TRUE(ProgressUntil([&] { return owner_.queued.size() == 1; }));
  fi_peer_rx_entry* entry = owner_.queued.front();
  owner_.queued.pop_front();
  ASSERT_EQ(owner_.srx.peer_ops->discard_tag(entry), 0);
  ASSERT_TRUE(SenderCompletion());
  EXPECT_EQ(owner_.freed, 1);
  fi_cq_tagged_entry completion;
  EXPECT_EQ(fi_cq_read(peer_.cq, &completion, 1), -FI_EAGAIN);
}

// A message larger than the owner's buffer: FI_ETRUNC at the peer.
TEST_P(SrxPeerTest, ATooLargeMessageIsTruncated) {
  char buf[4] = {};
  int context;
  owner_.Post({{buf, sizeof(buf)}, &context, false, 0, 0});
  ASSERT_EQ(fi_send(sender_.ep, "toolong", 8, nullptr, peer_.addr, nullptr), 0);
  fi_cq_tagged_entry entry;
  fi_addr_t source;
  ASSERT_TRUE(ProgressUntil([&] {
    return fi_cq_readfrom(peer_.cq, &entry, 1, &source) == -FI_EAVAIL;
  }));
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(peer_.cq, &error, 0), 1);
  EXPECT_EQ(error.err, FI_ETRUNC);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(owner_.freed, 1);
}

// The peer's SRX posts no receives (the owner does), and stays open while
// an endpoint is bound to it.
TEST_P(SrxPeerTest, ThePeerSrxPostsNothingAndOutlivesItsEndpoints) {
  char buf[4];
  EXPECT_EQ(fi_recv(srx_ep_, buf, sizeof(buf), nullptr, 0, nullptr),
            -FI_ENOSYS);
  EXPECT_EQ(fi_trecv(srx_ep_, buf, sizeof(buf), nullptr, 0, 0, 0, nullptr),
            -FI_ENOSYS);
  EXPECT_EQ(fi_close(&srx_ep_->fid), -FI_EBUSY);
  EXPECT_EQ(fi_ep_bind(sender_.ep, &srx_ep_->fid, 0), -FI_EOPBADSTATE);
}

// fi_srx_context's arguments (fi_peer(3): -FI_EINVAL for a malformed peer
// context or a provider that cannot be a peer).
TEST(SrxContextTest, BadArgumentsAreRefused) {
  fabric::fixtures::Objects tcp;
  ASSERT_EQ(
      fabric::fixtures::OpenLoopbackDomain(FI_EP_RDM, FI_MSG, nullptr, &tcp),
      0);
  TestOwner owner;
  owner.ops = {.size = sizeof(fi_ops_srx_owner),
               .get_msg = GetMsg,
               .get_tag = GetTag,
               .queue_msg = Queue,
               .queue_tag = Queue,
               .free_entry = Free};
  owner.srx.owner_ops = &owner.ops;
  fi_rx_attr attr = *tcp.info->rx_attr;
  attr.op_flags = FI_PEER;
  fid_ep* srx = nullptr;
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, nullptr), -FI_EINVAL);
  fi_peer_srx_context context = {0, &owner.srx};  // size 0
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, &context), -FI_EINVAL);
  context = {sizeof(context), nullptr};  // no owner
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, &context), -FI_EINVAL);
  fid_peer_srx no_ops = {};
  context = {sizeof(context), &no_ops};
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, &context), -FI_EINVAL);
  context = {sizeof(context), &owner.srx};
  EXPECT_EQ(fi_srx_context(tcp.domain, nullptr, &srx, &context), -FI_EINVAL);
  EXPECT_EQ(srx, nullptr);
  EXPECT_EQ(owner.srx.peer_ops, nullptr);
  // Without FI_PEER: the application's own shared receive context
  // (conformance/shared_context_test.cc), with its attributes checked.
  attr.op_flags = 0;
  attr.size = tcp.info->rx_attr->size + 1;
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, nullptr), -FI_EINVAL);
  attr.size = 0;
  attr.op_flags = FI_INJECT;
  EXPECT_EQ(fi_srx_context(tcp.domain, &attr, &srx, nullptr), -FI_EBADFLAGS);
  attr.op_flags = 0;
  ASSERT_EQ(fi_srx_context(tcp.domain, &attr, &srx, nullptr), 0);
  EXPECT_EQ(srx->fid.fclass, FI_CLASS_SRX_CTX);
  EXPECT_EQ(fi_close(&srx->fid), 0);
  srx = nullptr;
  EXPECT_EQ(fabric::fixtures::CloseObjects(&tcp), 0);

  // udp's endpoints cannot take buffers from an owner.
  fabric::fixtures::Objects udp;
  ASSERT_EQ(fabric::fixtures::OpenLoopbackDomain(
                FI_EP_DGRAM, FI_MSG,
                [](fi_info* hints) {
                  free(hints->fabric_attr->prov_name);
                  hints->fabric_attr->prov_name = strdup("udp");
                },
                &udp),
            0);
  attr.op_flags = FI_PEER;
  EXPECT_EQ(fi_srx_context(udp.domain, &attr, &srx, &context), -FI_EINVAL);
  EXPECT_EQ(owner.srx.peer_ops, nullptr);
  // Nor has udp shared contexts of its own.
  attr.op_flags = 0;
  EXPECT_EQ(fi_srx_context(udp.domain, &attr, &srx, nullptr), -FI_ENOSYS);
  fid_stx* stx = nullptr;
  fi_tx_attr tx_attr = {};
  EXPECT_EQ(fi_stx_context(udp.domain, &tx_attr, &stx, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_stx_context(udp.domain, nullptr, &stx, nullptr), -FI_EINVAL);
  EXPECT_EQ(fabric::fixtures::CloseObjects(&udp), 0);
}

INSTANTIATE_TEST_SUITE_P(Providers, SrxPeerTest,
                         ::testing::Values("tcp", "shm"),
                         [](const auto& info) { return info.param; });

}  // namespace

// The peer API (fi_peer(3)) with real tcp RDM endpoints.
// Peer CQ: a CQ opened with FI_PEER hands every completion of the endpoint
// bound to it to the owner's fid_peer_cq, and only fi_cq_read(cq, NULL, 0)
// (progress) works on it. The owner is first a foreign provider (this
// test's callbacks), then one of our CQs (UtilCqOwnerFid).
// Peer AV and AV set: ours as owners, queried as a peer provider would.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <string.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/av_set.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/peer_av.h"
#include "fabric/providers/util/peer_cq.h"
#include "gtest/gtest.h"

namespace {

// A foreign owner: what its write/writeerr were given.
struct TestOwner {
  fid_peer_cq fid = {};
  fi_ops_cq_owner ops = {};
  std::vector<fi_cq_tagged_entry> entries;
  std::vector<fi_addr_t> sources;
  std::vector<fi_cq_err_entry> errors;
};

TestOwner* OwnerOf(fid_peer_cq* cq) {
  return reinterpret_cast<TestOwner*>(cq);  // fid is TestOwner's first member
}

ssize_t RecordWrite(fid_peer_cq* cq, void* context, uint64_t flags,
                    size_t len, void* buf, uint64_t data, uint64_t tag,
                    fi_addr_t src) {
  OwnerOf(cq)->entries.push_back({context, flags, len, buf, data, tag});
  OwnerOf(cq)->sources.push_back(src);
  return 0;
}

ssize_t RecordWriteErr(fid_peer_cq* cq, const fi_cq_err_entry* error) {
  OwnerOf(cq)->errors.push_back(*error);
  return 0;
}

class TcpPeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_.fid.fid.fclass = FI_CLASS_PEER_CQ;
    owner_.ops = {.size = sizeof(fi_ops_cq_owner),
                  .write = RecordWrite,
                  .writeerr = RecordWriteErr};
    owner_.fid.owner_ops = &owner_.ops;
    ASSERT_EQ(fabric::fixtures::OpenLoopbackDomain(
                  FI_EP_RDM, FI_MSG | FI_SOURCE,
                  [](fi_info* hints) {
                    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                  },
                  &loopback_),
              0);
    ASSERT_EQ(fabric::fixtures::OpenTableAv(loopback_.domain, &loopback_.av),
              0);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_cq_open(loopback_.domain, &cq_attr, &plain_.cq, nullptr), 0);
  }

  void TearDown() override {
    EXPECT_EQ(fabric::fixtures::CloseAvEndpoint(&peer_), 0);
    EXPECT_EQ(fabric::fixtures::CloseAvEndpoint(&plain_), 0);
    EXPECT_EQ(fabric::fixtures::CloseObjects(&loopback_), 0);
  }

  // Opens peer_.cq importing `owner`, and the two endpoints: peer_.ep on
  // it, plain_.ep on plain_.cq; each in the AV of the other.
  void OpenEndpoints(fid_peer_cq* owner) {
    peer_context_ = {sizeof(fi_peer_cq_context), owner};
    fi_cq_attr attr = {};
    attr.format = FI_CQ_FORMAT_TAGGED;
    attr.flags = FI_PEER;
    ASSERT_EQ(fi_cq_open(loopback_.domain, &attr, &peer_.cq, &peer_context_),
              0);
    for (fabric::fixtures::AvEndpoint* end : {&peer_, &plain_}) {
      ASSERT_EQ(
          fabric::fixtures::OpenBoundEndpoint(loopback_.domain, loopback_.info,
                                              loopback_.av, end->cq, &end->ep),
          0);
      char name[64];
      size_t len = sizeof(name);
      ASSERT_EQ(fi_getname(&end->ep->fid, name, &len), 0);
      ASSERT_EQ(fi_av_insert(loopback_.av, name, 1, &end->addr, 0, nullptr), 1);
    }
  }

  // Drives both endpoints (the peer CQ by fi_cq_read(cq, NULL, 0), as an
  // owner does) until `done` or 5 s.
  bool ProgressUntil(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      if (done()) return true;  // once: `done` may consume what it finds
      if (std::chrono::steady_clock::now() >= deadline) return false;
      EXPECT_EQ(fi_cq_read(peer_.cq, nullptr, 0), 0);
      fi_cq_tagged_entry entry;
      fi_cq_read(plain_.cq, &entry, 1);
    }
  }

  TestOwner owner_;
  fi_peer_cq_context peer_context_ = {};
  fabric::fixtures::Objects loopback_;
  // The endpoint whose CQ is the owner's peer CQ, and a plain one.
  fabric::fixtures::AvEndpoint peer_;
  fabric::fixtures::AvEndpoint plain_;
};

TEST_F(TcpPeerTest, CompletionsAndErrorsGoToTheOwner) {
  OpenEndpoints(&owner_.fid);
  char in[16] = {};
  int recv_context, send_context, cancelled_context;
  ASSERT_EQ(fi_recv(peer_.ep, in, sizeof(in), nullptr, 0, &recv_context), 0);
  ASSERT_EQ(fi_send(plain_.ep, "hello", 6, nullptr, peer_.addr, nullptr), 0);
  ASSERT_TRUE(ProgressUntil([&] { return owner_.entries.size() == 1; }));
  EXPECT_EQ(owner_.entries[0].op_context, &recv_context);
  EXPECT_EQ(owner_.entries[0].flags, FI_RECV | FI_MSG);
  EXPECT_EQ(owner_.entries[0].len, 6u);
  EXPECT_EQ(owner_.sources[0], plain_.addr);  // FI_SOURCE, in the peer's AV
  EXPECT_STREQ(in, "hello");

  ASSERT_EQ(fi_send(peer_.ep, "back", 5, nullptr, plain_.addr, &send_context),
            0);
  ASSERT_TRUE(ProgressUntil([&] { return owner_.entries.size() == 2; }));
  EXPECT_EQ(owner_.entries[1].op_context, &send_context);
  EXPECT_EQ(owner_.entries[1].flags, FI_SEND | FI_MSG);

  ASSERT_EQ(fi_recv(peer_.ep, in, sizeof(in), nullptr, 0, &cancelled_context),
            0);
  ASSERT_EQ(fi_cancel(&peer_.ep->fid, &cancelled_context), 0);
  ASSERT_TRUE(ProgressUntil([&] { return owner_.errors.size() == 1; }));
  EXPECT_EQ(owner_.errors[0].op_context, &cancelled_context);
  EXPECT_EQ(owner_.errors[0].err, FI_ECANCELED);
}

// fi_peer(3): "The peer provider should set other functions that attempt
// to read the peer's CQ (i.e. fi_cq_readerr, fi_cq_sread, etc.) to return
// -FI_ENOSYS."
TEST_F(TcpPeerTest, ReadsOfThePeerCqAreNotImplemented) {
  OpenEndpoints(&owner_.fid);
  fi_cq_tagged_entry entry;
  fi_addr_t source;
  fi_cq_err_entry error = {};
  EXPECT_EQ(fi_cq_read(peer_.cq, &entry, 1), -FI_ENOSYS);
  EXPECT_EQ(fi_cq_readfrom(peer_.cq, &entry, 1, &source), -FI_ENOSYS);
  EXPECT_EQ(fi_cq_readerr(peer_.cq, &error, 0), -FI_ENOSYS);
  EXPECT_EQ(fi_cq_sread(peer_.cq, &entry, 1, nullptr, 0), -FI_ENOSYS);
  EXPECT_EQ(fi_cq_signal(peer_.cq), -FI_ENOSYS);
  EXPECT_EQ(fi_cq_read(peer_.cq, nullptr, 0), 0);  // progress
}

TEST_F(TcpPeerTest, MalformedPeerContextsAreRefused) {
  fi_cq_attr attr = {};
  attr.format = FI_CQ_FORMAT_TAGGED;
  attr.flags = FI_PEER;
  fid_cq* cq = nullptr;
  EXPECT_EQ(fi_cq_open(loopback_.domain, &attr, &cq, nullptr), -FI_EINVAL);
  fi_peer_cq_context context = {0, &owner_.fid};  // size 0
  EXPECT_EQ(fi_cq_open(loopback_.domain, &attr, &cq, &context), -FI_EINVAL);
  context = {sizeof(context), nullptr};  // no owner
  EXPECT_EQ(fi_cq_open(loopback_.domain, &attr, &cq, &context), -FI_EINVAL);
  fid_peer_cq no_ops = {};
  context = {sizeof(context), &no_ops};
  EXPECT_EQ(fi_cq_open(loopback_.domain, &attr, &cq, &context), -FI_EINVAL);
  EXPECT_EQ(cq, nullptr);
}

// One of our CQs as the owner: the peer's completions are read from it.
TEST_F(TcpPeerTest, OneOfOurCqsOwnsAPeerCq) {
  fi_cq_attr attr = {};
  attr.format = FI_CQ_FORMAT_TAGGED;
  fid_cq* owner_cq = nullptr;
  ASSERT_EQ(fi_cq_open(loopback_.domain, &attr, &owner_cq, nullptr), 0);
  fid_peer_cq* owner =
      fabric::UtilCqOwnerFid(fabric::FidCast<fabric::UtilCq>(owner_cq));
  EXPECT_EQ(owner->fid.fclass, FI_CLASS_PEER_CQ);
  OpenEndpoints(owner);
  char in[16] = {};
  int recv_context;
  ASSERT_EQ(fi_recv(peer_.ep, in, sizeof(in), nullptr, 0, &recv_context), 0);
  ASSERT_EQ(fi_send(plain_.ep, "owned", 6, nullptr, peer_.addr, nullptr), 0);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_UNSPEC;
  ASSERT_TRUE(ProgressUntil(
      [&] { return fi_cq_readfrom(owner_cq, &entry, 1, &source) == 1; }));
  EXPECT_EQ(entry.op_context, &recv_context);
  EXPECT_EQ(entry.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(source, plain_.addr);
  EXPECT_STREQ(in, "owned");
  // The peer CQ must close before its owner (fi_peer(3)).
  EXPECT_EQ(fi_close(&peer_.ep->fid), 0);
  peer_.ep = nullptr;
  EXPECT_EQ(fi_close(&peer_.cq->fid), 0);
  peer_.cq = nullptr;
  EXPECT_EQ(fi_close(&owner_cq->fid), 0);
}

// The owner's fid_peer_av: query() reports the AV, ep_addr() finds a local
// endpoint's address in it (FI_ADDR_NOTAVAIL once removed).
TEST_F(TcpPeerTest, OurAvAnswersAPeerProvider) {
  OpenEndpoints(&owner_.fid);
  fid_peer_av* peer_av =
      fabric::UtilAvOwnerFid(fabric::AsUtilAv(&loopback_.av->fid));
  ASSERT_EQ(peer_av->fid.fclass, FI_CLASS_PEER_AV);
  const fi_ops_av_owner& ops = *peer_av->owner_ops;
  EXPECT_EQ(ops.size, sizeof(fi_ops_av_owner));
  fi_av_attr attr = {};
  ASSERT_EQ(ops.query(peer_av, &attr), 0);
  EXPECT_EQ(attr.type, FI_AV_TABLE);
  EXPECT_EQ(attr.count, 2u);
  EXPECT_EQ(ops.query(peer_av, nullptr), -FI_EINVAL);
  EXPECT_EQ(ops.ep_addr(peer_av, peer_.ep), peer_.addr);
  EXPECT_EQ(ops.ep_addr(peer_av, plain_.ep), plain_.addr);
  EXPECT_EQ(ops.ep_addr(peer_av, nullptr), FI_ADDR_NOTAVAIL);
  ASSERT_EQ(fi_av_remove(loopback_.av, &plain_.addr, 1, 0), 0);
  EXPECT_EQ(ops.ep_addr(peer_av, plain_.ep), FI_ADDR_NOTAVAIL);
  ASSERT_EQ(ops.query(peer_av, &attr), 0);
  EXPECT_EQ(attr.count, 1u);
}

// The owner's fid_peer_av_set: members() in set order, -FI_ETOOSMALL with
// the count needed when the array is short.
TEST_F(TcpPeerTest, OurAvSetListsItsMembersToAPeerProvider) {
  OpenEndpoints(&owner_.fid);
  fi_av_set_attr attr = {};
  attr.count = 2;
  attr.start_addr = FI_ADDR_NOTAVAIL;
  attr.end_addr = FI_ADDR_NOTAVAIL;
  fid_av_set* set = nullptr;
  ASSERT_EQ(fi_av_set(loopback_.av, &attr, &set, nullptr), 0);
  ASSERT_EQ(fi_av_set_insert(set, plain_.addr), 0);
  ASSERT_EQ(fi_av_set_insert(set, peer_.addr), 0);
  fid_peer_av_set* peer_set =
      fabric::UtilAvSetOwnerFid(fabric::AsUtilAvSet(set));
  ASSERT_EQ(peer_set->fid.fclass, FI_CLASS_PEER_AV_SET);
  fi_addr_t members[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  size_t count = 1;
  EXPECT_EQ(peer_set->owner_ops->members(peer_set, members, &count),
            -FI_ETOOSMALL);
  EXPECT_EQ(count, 2u);
  ASSERT_EQ(peer_set->owner_ops->members(peer_set, members, &count), 0);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(members[0], plain_.addr);
  EXPECT_EQ(members[1], peer_.addr);
  EXPECT_EQ(peer_set->owner_ops->members(peer_set, members, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_close(&set->fid), 0);
}

}  // namespace

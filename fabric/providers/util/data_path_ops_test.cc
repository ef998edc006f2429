// The tables of data_path_ops.h and atomic_path_ops.h, called through the
// public inline functions (fi_send, fi_readv, fi_compare_atomicmsg, ...):
// each entry point must arrive as the call it is, with its arguments in
// their places; a NULL msg is refused; a divert is asked first.
#include "fabric/providers/util/data_path_ops.h"

#include <gtest/gtest.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <optional>
#include <vector>

#include "fabric/providers/util/atomic_path_ops.h"

namespace fabric {
namespace {

constexpr uint64_t kTxOpFlags = FI_COMPLETION | FI_TRANSMIT_COMPLETE;
constexpr uint64_t kRxOpFlags = FI_COMPLETION | FI_MORE;

// What the calls saw, per test.
struct Seen {
  std::vector<TransmitCall> transmits;
  std::vector<fid_ep*> transmit_eps;  // the endpoint each one arrived on
  // Copies of what the one-buffer calls' pointers name: those live on the
  // entry's stack only while the call lasts.
  std::vector<iovec> first_iovs;
  std::vector<void*> first_descs;
  std::vector<void*> first_operands;
  std::vector<ReceiveCall> receives;
  std::vector<AtomicCall> atomics;
  std::vector<AtomicKind> valid_queries;
  std::vector<fi_addr_t> diverts_asked;
  fid_ep* divert_to = nullptr;  // the endpoint a divert names, if any
  ssize_t divert_answer = 0;
};
Seen* seen = nullptr;

struct RecordingCalls {
  static ssize_t Transmit(fid_ep* ep, const TransmitCall& call) {
    seen->transmits.push_back(call);
    seen->transmit_eps.push_back(ep);
    seen->first_iovs.push_back(call.iov[0]);
    seen->first_descs.push_back(call.desc != nullptr ? call.desc[0] : nullptr);
    return 0;
  }
  static ssize_t Receive(fid_ep*, const ReceiveCall& call) {
    seen->receives.push_back(call);
    return 0;
  }
  static ssize_t Atomic(fid_ep*, const AtomicCall& call) {
    seen->atomics.push_back(call);
    seen->first_operands.push_back(call.operands.ioc[0].addr);
    return 0;
  }
  static int AtomicValid(fid_ep*, AtomicKind kind, fi_datatype, fi_op,
                         size_t* count) {
    seen->valid_queries.push_back(kind);
    *count = 7;
    return 0;
  }
  static uint64_t TxFlags(fid_ep*) { return kTxOpFlags; }
  static uint64_t RxFlags(fid_ep*) { return kRxOpFlags; }
  static const fi_provider* Log(fid_ep*) { return nullptr; }
};

struct DivertingCalls : RecordingCalls {
  static constexpr bool kMayDivert = true;
  template <typename Ops, typename Op, typename... Args>
  static std::optional<ssize_t> Divert(fid_ep*, fi_addr_t dest,
                                       Ops* fid_ep::*table, Op Ops::*op,
                                       Args... args) {
    seen->diverts_asked.push_back(dest);
    fid_ep* other = seen->divert_to;
    if (other == nullptr) return std::nullopt;
    seen->divert_answer = ((other->*table)->*op)(other, args...);
    return seen->divert_answer;
  }
};

template <typename Calls>
struct Tables {
  fi_ops_msg msg = MsgOps<Calls>();
  fi_ops_tagged tagged = TaggedOps<Calls>();
  fi_ops_rma rma = RmaOps<Calls>();
  fi_ops_atomic atomic = AtomicOps<Calls>();
  fid_ep ep = {};
  Tables() {
    ep.msg = &msg;
    ep.tagged = &tagged;
    ep.rma = &rma;
    ep.atomic = &atomic;
  }
};

class DataPathOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { seen = &seen_; }
  void TearDown() override { seen = nullptr; }

  Seen seen_;
  Tables<RecordingCalls> plain_;
  fid_ep* ep_ = &plain_.ep;
  char buf_[64] = {};
  void* desc_ = reinterpret_cast<void*>(0x5);
  void* context_ = reinterpret_cast<void*>(0x77);
};

TEST_F(DataPathOpsTest, MsgCallsArriveAsTheyWereMade) {
  iovec iov[2] = {{buf_, 10}, {buf_ + 10, 20}};
  void* descs[2] = {desc_, desc_};
  fi_msg msg = {iov, descs, 2, 33, context_, 0x99};
  ASSERT_EQ(fi_send(ep_, buf_, 8, desc_, 11, context_), 0);
  ASSERT_EQ(fi_sendv(ep_, iov, descs, 2, 12, context_), 0);
  ASSERT_EQ(fi_sendmsg(ep_, &msg, FI_INJECT), 0);
  ASSERT_EQ(fi_inject(ep_, buf_, 4, 13), 0);
  ASSERT_EQ(fi_senddata(ep_, buf_, 8, desc_, 0x1234, 14, context_), 0);
  ASSERT_EQ(fi_injectdata(ep_, buf_, 8, 0x4321, 15), 0);
  const std::vector<TransmitCall>& t = seen_.transmits;
  ASSERT_EQ(t.size(), 6u);
  for (const TransmitCall& call : t) {
    EXPECT_EQ(call.kind, TransmitCall::Kind::kMsg);
    EXPECT_EQ(call.rma, nullptr);
  }
  EXPECT_STREQ(t[0].name, "fi_send");
  EXPECT_EQ(seen_.first_iovs[0].iov_base, buf_);
  EXPECT_EQ(seen_.first_iovs[0].iov_len, 8u);
  EXPECT_EQ(seen_.first_descs[0], desc_);
  EXPECT_EQ(t[0].count, 1u);
  EXPECT_EQ(t[0].dest, 11u);
  EXPECT_EQ(t[0].context, context_);
  EXPECT_EQ(t[0].flags, kTxOpFlags);
  EXPECT_FALSE(t[0].msg_call);
  EXPECT_FALSE(t[0].inject_call);
  EXPECT_FALSE(t[0].data_call);

  EXPECT_EQ(t[1].iov, iov);
  EXPECT_EQ(t[1].count, 2u);
  EXPECT_EQ(t[1].dest, 12u);

  EXPECT_EQ(t[2].iov, iov);
  EXPECT_EQ(t[2].desc, descs);
  EXPECT_EQ(t[2].dest, 33u);
  EXPECT_EQ(t[2].data, 0x99u);
  EXPECT_EQ(t[2].flags, static_cast<uint64_t>(FI_INJECT));
  EXPECT_TRUE(t[2].msg_call);
  EXPECT_FALSE(t[2].inject_call);

  EXPECT_EQ(t[3].desc, nullptr);
  EXPECT_EQ(seen_.first_iovs[3].iov_len, 4u);
  EXPECT_EQ(t[3].context, nullptr);
  EXPECT_EQ(t[3].flags, static_cast<uint64_t>(FI_INJECT));
  EXPECT_TRUE(t[3].inject_call);

  EXPECT_EQ(t[4].data, 0x1234u);
  EXPECT_EQ(t[4].flags, kTxOpFlags | FI_REMOTE_CQ_DATA);
  EXPECT_FALSE(t[4].inject_call);
  EXPECT_TRUE(t[4].data_call);
  EXPECT_FALSE(t[2].data_call);  // fi_sendmsg's data is in its msg

  EXPECT_EQ(t[5].data, 0x4321u);
  EXPECT_EQ(t[5].flags, static_cast<uint64_t>(FI_INJECT | FI_REMOTE_CQ_DATA));
  EXPECT_TRUE(t[5].inject_call);
  EXPECT_TRUE(t[5].data_call);
  EXPECT_EQ(t[5].dest, 15u);
}

TEST_F(DataPathOpsTest, ReceivesCarryTheirTagsAndFlags) {
  iovec iov = {buf_, 16};
  fi_msg msg = {&iov, &desc_, 1, 21, context_, 0};
  fi_msg_tagged tmsg = {&iov, &desc_, 1, 22, 0xaa, 0x0f, context_, 0};
  ASSERT_EQ(fi_recv(ep_, buf_, 16, desc_, 20, context_), 0);
  ASSERT_EQ(fi_recvmsg(ep_, &msg, FI_MULTI_RECV), 0);
  ASSERT_EQ(fi_trecv(ep_, buf_, 16, desc_, 23, 0xbb, 0xf0, context_), 0);
  ASSERT_EQ(fi_trecvmsg(ep_, &tmsg, FI_PEEK), 0);
  const std::vector<ReceiveCall>& r = seen_.receives;
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].source, 20u);
  EXPECT_EQ(r[0].flags, kRxOpFlags);
  EXPECT_FALSE(r[0].tagged);
  EXPECT_EQ(r[1].source, 21u);
  EXPECT_EQ(r[1].flags, static_cast<uint64_t>(FI_MULTI_RECV));
  EXPECT_TRUE(r[1].msg_call);
  EXPECT_TRUE(r[2].tagged);
  EXPECT_EQ(r[2].tag, 0xbbu);
  EXPECT_EQ(r[2].ignore, 0xf0u);
  EXPECT_EQ(r[2].source, 23u);
  EXPECT_TRUE(r[3].tagged);
  EXPECT_EQ(r[3].tag, 0xaau);
  EXPECT_EQ(r[3].ignore, 0x0fu);
  EXPECT_EQ(r[3].flags, static_cast<uint64_t>(FI_PEEK));
}

TEST_F(DataPathOpsTest, TaggedSendsAreTagged) {
  ASSERT_EQ(fi_tsend(ep_, buf_, 8, desc_, 1, 0xabc, context_), 0);
  ASSERT_EQ(fi_tinjectdata(ep_, buf_, 8, 0x55, 2, 0xdef), 0);
  ASSERT_EQ(seen_.transmits.size(), 2u);
  EXPECT_EQ(seen_.transmits[0].kind, TransmitCall::Kind::kTagged);
  EXPECT_EQ(seen_.transmits[0].tag, 0xabcu);
  EXPECT_EQ(seen_.transmits[1].tag, 0xdefu);
  EXPECT_EQ(seen_.transmits[1].data, 0x55u);
  EXPECT_TRUE(seen_.transmits[1].inject_call);
}

TEST_F(DataPathOpsTest, RmaCallsNameTheRemoteSide) {
  iovec iov[2] = {{buf_, 10}, {buf_ + 10, 20}};
  fi_rma_iov remote[2] = {{0x1000, 10, 7}, {0x2000, 20, 8}};
  fi_msg_rma msg = {iov, nullptr, 2, 40, remote, 2, context_, 0x66};
  ASSERT_EQ(fi_read(ep_, buf_, 8, desc_, 41, 0x3000, 9, context_), 0);
  ASSERT_EQ(fi_writev(ep_, iov, nullptr, 2, 42, 0x4000, 10, context_), 0);
  ASSERT_EQ(fi_writemsg(ep_, &msg, FI_REMOTE_CQ_DATA), 0);
  ASSERT_EQ(fi_inject_writedata(ep_, buf_, 4, 0x77, 43, 0x5000, 11), 0);
  const std::vector<TransmitCall>& t = seen_.transmits;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].kind, TransmitCall::Kind::kRead);
  EXPECT_EQ(t[0].rma_count, 1u);
  EXPECT_EQ(t[0].dest, 41u);
  EXPECT_EQ(t[1].kind, TransmitCall::Kind::kWrite);
  EXPECT_EQ(t[1].rma_count, 1u);
  EXPECT_EQ(t[2].rma, remote);
  EXPECT_EQ(t[2].rma_count, 2u);
  EXPECT_EQ(t[2].data, 0x66u);
  EXPECT_EQ(t[3].data, 0x77u);
  EXPECT_TRUE(t[3].inject_call);
  EXPECT_EQ(t[3].flags, static_cast<uint64_t>(FI_INJECT | FI_REMOTE_CQ_DATA));
}

// The one-address calls' remote pieces live on the caller's stack; they
// are checked inside the call.
struct RemoteCheckingCalls : RecordingCalls {
  static ssize_t Transmit(fid_ep*, const TransmitCall& call) {
    if (call.rma == nullptr || call.rma_count != 1) return -FI_EINVAL;
    const fi_rma_iov& remote = call.rma[0];
    size_t local = 0;
    for (size_t i = 0; i < call.count; ++i) local += call.iov[i].iov_len;
    return remote.len == local && remote.addr == 0x4000 && remote.key == 10
               ? 0
               : -FI_EIO;
  }
};

TEST_F(DataPathOpsTest, OneAddressRmaCoversAllLocalPieces) {
  Tables<RemoteCheckingCalls> tables;
  iovec iov[2] = {{buf_, 10}, {buf_ + 10, 20}};
  EXPECT_EQ(fi_writev(&tables.ep, iov, nullptr, 2, 1, 0x4000, 10, context_), 0);
  EXPECT_EQ(fi_readv(&tables.ep, iov, nullptr, 2, 1, 0x4000, 10, context_), 0);
  EXPECT_EQ(fi_write(&tables.ep, buf_, 30, nullptr, 1, 0x4000, 10, context_),
            0);
  EXPECT_EQ(fi_write(&tables.ep, buf_, 30, nullptr, 1, 0x4001, 10, context_),
            -FI_EIO);
}

TEST_F(DataPathOpsTest, AtomicCallsArriveAsTheirKind) {
  uint64_t operand = 1, compare = 2, result = 0;
  fi_ioc ioc = {&operand, 1};
  fi_ioc compare_ioc = {&compare, 1};
  fi_ioc result_ioc = {&result, 1};
  fi_rma_ioc remote = {0x8000, 1, 3};
  fi_msg_atomic msg = {&ioc, nullptr,   1,        50,       &remote,
                       1,    FI_UINT64, FI_CSWAP, context_, 0x12};
  ASSERT_EQ(fi_atomic(ep_, &operand, 1, desc_, 51, 0x9000, 4, FI_UINT64, FI_SUM,
                      context_),
            0);
  ASSERT_EQ(
      fi_inject_atomic(ep_, &operand, 1, 52, 0x9000, 4, FI_UINT64, FI_SUM), 0);
  ASSERT_EQ(fi_fetch_atomic(ep_, &operand, 1, desc_, &result, desc_, 53, 0x9000,
                            4, FI_UINT64, FI_SUM, context_),
            0);
  ASSERT_EQ(fi_compare_atomicmsg(ep_, &msg, &compare_ioc, nullptr, 1,
                                 &result_ioc, nullptr, 1, FI_FENCE),
            0);
  const std::vector<AtomicCall>& a = seen_.atomics;
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].kind, AtomicKind::kWrite);
  EXPECT_EQ(a[0].op, FI_SUM);
  EXPECT_EQ(seen_.first_operands[0], &operand);
  EXPECT_EQ(a[0].rma_count, 1u);
  EXPECT_EQ(a[0].dest, 51u);
  EXPECT_EQ(a[0].flags, kTxOpFlags);
  EXPECT_TRUE(a[1].inject_call);
  EXPECT_EQ(a[2].kind, AtomicKind::kFetch);
  EXPECT_EQ(a[2].result.count, 1u);
  EXPECT_EQ(a[2].dest, 53u);
  EXPECT_EQ(a[3].kind, AtomicKind::kCompare);
  EXPECT_EQ(a[3].compare.ioc, &compare_ioc);
  EXPECT_EQ(a[3].result.ioc, &result_ioc);
  EXPECT_EQ(a[3].rma, &remote);
  EXPECT_EQ(a[3].datatype, FI_UINT64);
  EXPECT_EQ(a[3].op, FI_CSWAP);
  EXPECT_EQ(a[3].data, 0x12u);
  EXPECT_EQ(a[3].flags, static_cast<uint64_t>(FI_FENCE));
  EXPECT_TRUE(a[3].msg_call);

  size_t count = 0;
  EXPECT_EQ(fi_compare_atomicvalid(ep_, FI_UINT64, FI_CSWAP, &count), 0);
  EXPECT_EQ(count, 7u);
  EXPECT_EQ(fi_fetch_atomicvalid(ep_, FI_UINT64, FI_SUM, &count), 0);
  ASSERT_EQ(seen_.valid_queries.size(), 2u);
  EXPECT_EQ(seen_.valid_queries[0], AtomicKind::kCompare);
  EXPECT_EQ(seen_.valid_queries[1], AtomicKind::kFetch);
}

TEST_F(DataPathOpsTest, NullMsgIsRefused) {
  EXPECT_EQ(fi_sendmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_recvmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_tsendmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_trecvmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_readmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_writemsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_atomicmsg(ep_, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_fetch_atomicmsg(ep_, nullptr, nullptr, nullptr, 0, 0),
            -FI_EINVAL);
  EXPECT_EQ(fi_compare_atomicmsg(ep_, nullptr, nullptr, nullptr, 0, nullptr,
                                 nullptr, 0, 0),
            -FI_EINVAL);
  EXPECT_TRUE(seen_.transmits.empty());
  EXPECT_TRUE(seen_.receives.empty());
  EXPECT_TRUE(seen_.atomics.empty());
}

// RMA and atomic *msg calls that count remote pieces but give no list of
// them are refused before they reach the provider.
TEST_F(DataPathOpsTest, MsgWithoutItsRemoteListIsRefused) {
  iovec iov = {buf_, 8};
  fi_msg_rma rma = {};
  rma.msg_iov = &iov;
  rma.iov_count = 1;
  rma.rma_iov_count = 1;
  EXPECT_EQ(fi_readmsg(ep_, &rma, 0), -FI_EINVAL);
  EXPECT_EQ(fi_writemsg(ep_, &rma, 0), -FI_EINVAL);
  fi_ioc ioc = {buf_, 1};
  fi_msg_atomic atomic = {};
  atomic.msg_iov = &ioc;
  atomic.iov_count = 1;
  atomic.rma_iov_count = 1;
  atomic.datatype = FI_UINT64;
  atomic.op = FI_SUM;
  fi_ioc result = {buf_ + 8, 1};
  fi_ioc compare = {buf_ + 16, 1};
  EXPECT_EQ(fi_atomicmsg(ep_, &atomic, 0), -FI_EINVAL);
  EXPECT_EQ(fi_fetch_atomicmsg(ep_, &atomic, &result, nullptr, 1, 0),
            -FI_EINVAL);
  atomic.op = FI_CSWAP;
  EXPECT_EQ(fi_compare_atomicmsg(ep_, &atomic, &compare, nullptr, 1, &result,
                                 nullptr, 1, 0),
            -FI_EINVAL);
  EXPECT_TRUE(seen_.transmits.empty());
  EXPECT_TRUE(seen_.atomics.empty());
  // With the list, each arrives.
  fi_rma_iov remote = {0x4000, 8, 10};
  rma.rma_iov = &remote;
  EXPECT_EQ(fi_writemsg(ep_, &rma, 0), 0);
  EXPECT_EQ(seen_.transmits.size(), 1u);
}

TEST_F(DataPathOpsTest, ReceiveOnlyTablesRefuseTransmits) {
  fi_ops_msg msg = ReceiveOnlyMsgOps<RecordingCalls>();
  fi_ops_tagged tagged = ReceiveOnlyTaggedOps<RecordingCalls>();
  fid_ep ep = {};
  ep.msg = &msg;
  ep.tagged = &tagged;
  EXPECT_EQ(fi_send(&ep, buf_, 1, nullptr, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_tinject(&ep, buf_, 1, 0, 5), -FI_ENOSYS);
  EXPECT_EQ(fi_recv(&ep, buf_, 1, nullptr, 0, nullptr), 0);
  EXPECT_EQ(fi_trecv(&ep, buf_, 1, nullptr, 0, 1, 0, nullptr), 0);
  EXPECT_EQ(seen_.receives.size(), 2u);
  EXPECT_TRUE(seen_.transmits.empty());
}

TEST_F(DataPathOpsTest, DivertTakesTransmitsItNames) {
  Tables<DivertingCalls> diverting;
  // Without a named endpoint the call is the endpoint's own.
  ASSERT_EQ(fi_send(&diverting.ep, buf_, 8, nullptr, 61, context_), 0);
  EXPECT_EQ(seen_.transmits.size(), 1u);
  // Named: the other endpoint's table takes the same call.
  seen_.divert_to = ep_;
  ASSERT_EQ(fi_tsenddata(&diverting.ep, buf_, 8, nullptr, 9, 62, 0x7, context_),
            0);
  ASSERT_EQ(fi_write(&diverting.ep, buf_, 8, nullptr, 63, 0x1, 2, context_), 0);
  uint64_t operand = 1;
  ASSERT_EQ(fi_atomic(&diverting.ep, &operand, 1, nullptr, 64, 0x1, 2,
                      FI_UINT64, FI_SUM, context_),
            0);
  // A receive is never diverted.
  ASSERT_EQ(fi_recv(&diverting.ep, buf_, 8, nullptr, 65, context_), 0);
  EXPECT_EQ(seen_.diverts_asked, (std::vector<fi_addr_t>{61, 62, 63, 64}));
  ASSERT_EQ(seen_.transmits.size(), 3u);
  EXPECT_EQ(seen_.transmit_eps,
            (std::vector<fid_ep*>{&diverting.ep, ep_, ep_}));
  EXPECT_EQ(seen_.transmits[1].kind, TransmitCall::Kind::kTagged);
  EXPECT_EQ(seen_.transmits[1].tag, 0x7u);
  EXPECT_EQ(seen_.transmits[2].kind, TransmitCall::Kind::kWrite);
  EXPECT_EQ(seen_.atomics.size(), 1u);
  EXPECT_EQ(seen_.receives.size(), 1u);
}

}  // namespace
}  // namespace fabric

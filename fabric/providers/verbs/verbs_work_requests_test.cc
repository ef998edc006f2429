// The send queue's work requests of the verbs RC endpoint, the atomics it
// offers and its queue pair's capacities, checked without a device.
#include "fabric/providers/verbs/verbs_work_requests.h"

#include <arpa/inet.h>
#include <rdma/fi_errno.h>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

int Build(const SendOp& op, ibv_send_wr* wr) {
  *wr = {};
  return ToFiErrno(BuildSendWr(op, wr));
}

TEST(VerbsWorkRequestsTest, SendsAndWritesCarryRemoteCqDataAsImmediateData) {
  ibv_send_wr wr;
  SendOp op;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_SEND);
  EXPECT_EQ(wr.send_flags, static_cast<unsigned>(IBV_SEND_SIGNALED));
  op.with_data = true;
  op.data = 0x01020304;
  op.inject = true;
  op.signaled = false;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_SEND_WITH_IMM);
  EXPECT_EQ(wr.imm_data, htonl(0x01020304));
  EXPECT_EQ(wr.send_flags, static_cast<unsigned>(IBV_SEND_INLINE));
  op.kind = SendOp::kWrite;
  op.remote_addr = 0x7000;
  op.rkey = 0xabcd;
  op.fence = true;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
  EXPECT_EQ(wr.wr.rdma.remote_addr, 0x7000u);
  EXPECT_EQ(wr.wr.rdma.rkey, 0xabcdu);
  EXPECT_EQ(wr.send_flags,
            static_cast<unsigned>(IBV_SEND_INLINE | IBV_SEND_FENCE));
  EXPECT_EQ(CompletionFlagsOf(op), FI_RMA | FI_WRITE);
  op.with_data = false;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_RDMA_WRITE);
  EXPECT_EQ(wr.imm_data, 0u);
}

TEST(VerbsWorkRequestsTest, RefusesWhatVerbsCannotCarry) {
  ibv_send_wr wr;
  SendOp op;
  op.with_data = true;
  op.data = uint64_t{1} << 32;  // wider than the immediate data
  EXPECT_EQ(Build(op, &wr), -FI_EINVAL);
  op.data = 1;
  op.kind = SendOp::kRead;  // a read carries no data to the target's CQ
  EXPECT_EQ(Build(op, &wr), -FI_EINVAL);
  op.kind = SendOp::kAtomic;  // nor does an RC atomic
  EXPECT_EQ(Build(op, &wr), -FI_EOPNOTSUPP);
  op.kind = SendOp::kRead;
  op.with_data = false;
  op.inject = true;  // nothing to copy at post time
  EXPECT_EQ(Build(op, &wr), -FI_EINVAL);
  op.inject = false;
  op.rkey = uint64_t{1} << 32;  // verbs keys have 32 bits
  EXPECT_EQ(Build(op, &wr), -FI_EINVAL);
  op.rkey = 5;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_RDMA_READ);
  EXPECT_EQ(CompletionFlagsOf(op), FI_RMA | FI_READ);
}

TEST(VerbsWorkRequestsTest, AtomicsAreSixtyFourBitAddsAndCompareAndSwaps) {
  ibv_send_wr wr;
  SendOp op;
  op.kind = SendOp::kAtomic;
  op.remote_addr = 0x1008;
  op.rkey = 9;
  op.op = FI_SUM;
  op.operand = 5;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
  EXPECT_EQ(wr.wr.atomic.remote_addr, 0x1008u);
  EXPECT_EQ(wr.wr.atomic.rkey, 9u);
  EXPECT_EQ(wr.wr.atomic.compare_add, 5u);
  EXPECT_EQ(CompletionFlagsOf(op), FI_ATOMIC | FI_WRITE);
  op.op = FI_ATOMIC_READ;  // an add of nothing
  op.fetch = true;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
  EXPECT_EQ(wr.wr.atomic.compare_add, 0u);
  EXPECT_EQ(CompletionFlagsOf(op), FI_ATOMIC | FI_READ);
  op.op = FI_CSWAP;
  op.compare = 7;
  op.operand = 8;
  op.datatype = FI_INT64;
  ASSERT_EQ(Build(op, &wr), 0);
  EXPECT_EQ(wr.opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
  EXPECT_EQ(wr.wr.atomic.compare_add, 7u);
  EXPECT_EQ(wr.wr.atomic.swap, 8u);
  op.remote_addr = 0x1004;  // not 8-byte aligned
  EXPECT_EQ(Build(op, &wr), -FI_EINVAL);
  op.remote_addr = 0x1008;
  op.datatype = FI_UINT32;
  EXPECT_EQ(Build(op, &wr), -FI_EOPNOTSUPP);
  op.datatype = FI_UINT64;
  op.op = FI_PROD;
  EXPECT_EQ(Build(op, &wr), -FI_EOPNOTSUPP);
}

TEST(VerbsWorkRequestsTest, AtomicValidSaysOneElementOrNotSupported) {
  constexpr AtomicKind kWrite = AtomicKind::kWrite;
  constexpr AtomicKind kFetch = AtomicKind::kFetch;
  constexpr AtomicKind kCompare = AtomicKind::kCompare;
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_SUM, kWrite, true), 1);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_SUM, kFetch, true), 1);
  EXPECT_EQ(AtomicCount(FI_INT64, FI_ATOMIC_READ, kFetch, true), 1);
  // A read without a result is no operation at all.
  EXPECT_EQ(AtomicCount(FI_INT64, FI_ATOMIC_READ, kWrite, true),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_CSWAP, kCompare, true), 1);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_CSWAP, kFetch, true), -FI_EOPNOTSUPP);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_SUM, kCompare, true), -FI_EOPNOTSUPP);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_ATOMIC_WRITE, kFetch, true),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(AtomicCount(FI_DOUBLE, FI_SUM, kFetch, true), -FI_EOPNOTSUPP);
  EXPECT_EQ(AtomicCount(FI_UINT64, FI_SUM, kFetch, false), -FI_EOPNOTSUPP);
}

TEST(VerbsWorkRequestsTest, QueuePairCapacitiesComeFromTheAttributes) {
  ibv_device_attr device = {};
  device.max_qp_wr = 16384;
  device.max_sge = 30;
  fi_tx_attr tx = {};
  fi_rx_attr rx = {};
  tx.size = 1024;
  tx.iov_limit = 4;
  tx.inject_size = 64;
  rx.size = 512;
  rx.iov_limit = 2;
  absl::StatusOr<ibv_qp_cap> cap = QpCaps(tx, rx, device, 220);
  ASSERT_TRUE(cap.ok()) << cap.status();
  EXPECT_EQ(cap->max_send_wr, 1024u);
  EXPECT_EQ(cap->max_recv_wr, 512u);
  EXPECT_EQ(cap->max_send_sge, 4u);
  EXPECT_EQ(cap->max_recv_sge, 2u);
  EXPECT_EQ(cap->max_inline_data, 64u);
  tx.inject_size = 256;  // more than the device inlines
  EXPECT_EQ(ToFiErrno(QpCaps(tx, rx, device, 220).status()), -FI_EINVAL);
  tx.inject_size = 64;
  rx.size = 20000;
  EXPECT_EQ(ToFiErrno(QpCaps(tx, rx, device, 220).status()), -FI_EINVAL);
  rx.size = 0;  // still room for one
  cap = QpCaps(tx, rx, device, 220);
  ASSERT_TRUE(cap.ok());
  EXPECT_EQ(cap->max_recv_wr, 1u);
  tx.iov_limit = 31;
  EXPECT_EQ(ToFiErrno(QpCaps(tx, rx, device, 220).status()), -FI_EINVAL);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

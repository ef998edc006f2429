// Atomics (fi_atomic(3)) over tcp MSG endpoints: every operation with its
// value checked at the target and the old values fetched back, the valid
// queries and fi_query_atomic, refusals that tear the connection down, and
// the arguments the calls refuse.
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <string.h>

#include <vector>

#include "fabric/providers/tcp/msg_pair_test.h"

namespace fabric {
namespace {

// fi_atomic(3)'s formula for `op`: addr[i] `a`, buf[i] `b`, compare[i] `c`.
int64_t Expected(int op, int64_t a, int64_t b, int64_t c) {
  switch (op) {
    case FI_MIN: return b < a ? b : a;
    case FI_MAX: return b > a ? b : a;
    case FI_SUM: return a + b;
    case FI_PROD: return a * b;
    case FI_LOR: return a || b;
    case FI_LAND: return a && b;
    case FI_BOR: return a | b;
    case FI_BAND: return a & b;
    case FI_LXOR: return (a && !b) || (!a && b);
    case FI_BXOR: return a ^ b;
    case FI_ATOMIC_READ: return a;
    case FI_ATOMIC_WRITE: return b;
    case FI_CSWAP: return c == a ? b : a;
    case FI_CSWAP_NE: return c != a ? b : a;
    case FI_CSWAP_LE: return c <= a ? b : a;
    case FI_CSWAP_LT: return c < a ? b : a;
    case FI_CSWAP_GE: return c >= a ? b : a;
    case FI_CSWAP_GT: return c > a ? b : a;
    case FI_MSWAP: return (b & c) | (a & ~c);
  }
  ADD_FAILURE() << "no op " << op;
  return 0;
}

class TcpAtomicTest : public MsgPairTest {
 protected:
  // Registers `bytes` bytes at `buffer` on the server for remote access.
  fid_mr* Expose(void* buffer, size_t bytes, uint64_t access) {
    fid_mr* mr = nullptr;
    EXPECT_EQ(fi_mr_reg(server_.domain, buffer, bytes, access, 0, 0, 0, &mr,
                        nullptr),
              0);
    return mr;
  }
  static uint64_t Addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

  // Every operation on three elements of type T, each through the fetching
  // or compare call so that the old values come back too; write-class
  // operations once more through fi_atomic.
  template <typename T>
  void EveryOperation(fi_datatype datatype) {
    const T initial[3] = {6, 0, 5};
    const T operand[3] = {3, 5, 12};
    // Element 0 compares equal, 1 greater than, 2 less than the target.
    const T compare[3] = {6, 1, 4};
    T target[3];
    fid_mr* mr = Expose(target, sizeof(target),
                        FI_REMOTE_READ | FI_REMOTE_WRITE);
    for (int op = FI_MIN; op < FI_ATOMIC_OP_LAST; ++op) {
      SCOPED_TRACE(testing::Message() << "datatype " << datatype << " op "
                                      << op);
      memcpy(target, initial, sizeof(target));
      T result[3] = {};
      int context;
      if (op >= FI_CSWAP) {
        ASSERT_EQ(fi_compare_atomic(client_.ep, operand, 3, nullptr, compare,
                                    nullptr, result, nullptr, 0, Addr(target),
                                    fi_mr_key(mr), datatype,
                                    static_cast<fi_op>(op), &context),
                  0);
      } else {
        ASSERT_EQ(fi_fetch_atomic(client_.ep, operand, 3, nullptr, result,
                                  nullptr, 0, Addr(target), fi_mr_key(mr),
                                  datatype, static_cast<fi_op>(op), &context),
                  0);
      }
      fi_cq_tagged_entry entry = WaitCompletion(client_.cq);
      EXPECT_EQ(entry.op_context, &context);
      EXPECT_EQ(entry.flags, FI_ATOMIC | FI_READ);
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(target[i], static_cast<T>(Expected(op, initial[i],
                                                     operand[i], compare[i])))
            << "element " << i;
        EXPECT_EQ(result[i], initial[i]) << "element " << i;
      }
      if (op > FI_BXOR && op != FI_ATOMIC_WRITE) continue;
      memcpy(target, initial, sizeof(target));
      ASSERT_EQ(fi_atomic(client_.ep, operand, 3, nullptr, 0, Addr(target),
                          fi_mr_key(mr), datatype, static_cast<fi_op>(op),
                          &context),
                0);
      entry = WaitCompletion(client_.cq);
      EXPECT_EQ(entry.flags, FI_ATOMIC | FI_WRITE);
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(target[i], static_cast<T>(Expected(op, initial[i],
                                                     operand[i], 0)));
      }
    }
    EXPECT_EQ(fi_close(&mr->fid), 0);
  }
};

TEST_F(TcpAtomicTest, EveryOperationOnIntegers) {
  Connect();
  EveryOperation<int32_t>(FI_INT32);
  EveryOperation<uint64_t>(FI_UINT64);
  EveryOperation<int8_t>(FI_INT8);
  EveryOperation<uint16_t>(FI_UINT16);
  EveryOperation<__int128>(FI_INT128);
  EveryOperation<unsigned __int128>(FI_UINT128);
}

TEST_F(TcpAtomicTest, FloatingPointSumsAndCompares) {
  Connect();
  float floats[2] = {1.5f, -2.0f};
  double doubles[2] = {0.25, 10.0};
  fid_mr* fmr = Expose(floats, sizeof(floats), FI_REMOTE_WRITE);
  fid_mr* dmr = Expose(doubles, sizeof(doubles),
                       FI_REMOTE_WRITE | FI_REMOTE_READ);
  const float add[2] = {0.75f, 0.5f};
  ASSERT_EQ(fi_atomic(client_.ep, add, 2, nullptr, 0, Addr(floats),
                      fi_mr_key(fmr), FI_FLOAT, FI_SUM, nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(floats[0], 2.25f);
  EXPECT_EQ(floats[1], -1.5f);
  const double more[2] = {0.5, -20.0};
  double old[2];
  ASSERT_EQ(fi_fetch_atomic(client_.ep, more, 2, nullptr, old, nullptr, 0,
                            Addr(doubles), fi_mr_key(dmr), FI_DOUBLE, FI_SUM,
                            nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(doubles[0], 0.75);
  EXPECT_EQ(doubles[1], -10.0);
  EXPECT_EQ(old[0], 0.25);
  EXPECT_EQ(old[1], 10.0);
  // Swap where the target is greater than compare: only element 1.
  const double swap[2] = {7.0, 8.0};
  const double compare[2] = {1.0, -11.0};
  ASSERT_EQ(fi_compare_atomic(client_.ep, swap, 2, nullptr, compare, nullptr,
                              old, nullptr, 0, Addr(doubles), fi_mr_key(dmr),
                              FI_DOUBLE, FI_CSWAP_LT, nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(doubles[0], 0.75);
  EXPECT_EQ(doubles[1], 8.0);
  EXPECT_EQ(old[1], -10.0);
  EXPECT_EQ(fi_close(&fmr->fid), 0);
  EXPECT_EQ(fi_close(&dmr->fid), 0);
}

TEST_F(TcpAtomicTest, VectorsMessagesInjectAndCounters) {
  Connect();
  uint32_t target[6] = {1, 2, 3, 4, 5, 6};
  fid_mr* mr = Expose(target, sizeof(target),
                      FI_REMOTE_READ | FI_REMOTE_WRITE);
  // Operands scattered over two pieces, the target over two descriptors.
  uint32_t first[1] = {10};
  uint32_t rest[2] = {20, 30};
  fi_ioc iov[2] = {{first, 1}, {rest, 2}};
  fi_rma_ioc rma[2] = {{Addr(&target[0]), 1, fi_mr_key(mr)},
                       {Addr(&target[4]), 2, fi_mr_key(mr)}};
  fi_msg_atomic msg = {iov, nullptr, 2, 0, rma, 2, FI_UINT32, FI_SUM,
                       nullptr, 0x77};
  ASSERT_EQ(fi_atomicmsg(client_.ep, &msg, FI_REMOTE_CQ_DATA), 0);
  EXPECT_EQ(WaitCompletion(client_.cq).flags, FI_ATOMIC | FI_WRITE);
  fi_cq_tagged_entry remote = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(remote.flags, FI_ATOMIC | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(remote.data, 0x77u);
  const uint32_t after_msg[6] = {11, 2, 3, 4, 25, 36};
  EXPECT_EQ(memcmp(target, after_msg, sizeof(target)), 0);
  EXPECT_EQ(fi_cntr_read(server_.rx_cntr), 1u);  // FI_REMOTE_WRITE

  // fi_fetch_atomicv: FI_ATOMIC_READ takes no operands.
  uint32_t got[3] = {};
  fi_ioc result[2] = {{got, 1}, {got + 1, 2}};
  ASSERT_EQ(fi_fetch_atomicv(client_.ep, nullptr, nullptr, 0, result, nullptr,
                             2, 0, Addr(&target[3]), fi_mr_key(mr),
                             FI_UINT32, FI_ATOMIC_READ, nullptr),
            0);
  EXPECT_EQ(WaitCompletion(client_.cq).flags, FI_ATOMIC | FI_READ);
  EXPECT_EQ(got[0], 4u);
  EXPECT_EQ(got[1], 25u);
  EXPECT_EQ(got[2], 36u);
  EXPECT_EQ(memcmp(target, after_msg, sizeof(target)), 0);
  EXPECT_EQ(fi_cntr_read(server_.rx_cntr), 3u);  // + READ and WRITE

  // fi_compare_atomicv with a mask; fi_inject_atomic gives no entry.
  uint32_t bits = 0xffff, mask = 0x0ff0, old = 0;
  fi_ioc operand_ioc = {&bits, 1}, compare_ioc = {&mask, 1},
         old_ioc = {&old, 1};
  ASSERT_EQ(fi_compare_atomicv(client_.ep, &operand_ioc, nullptr, 1,
                               &compare_ioc, nullptr, 1, &old_ioc, nullptr, 1,
                               0, Addr(&target[1]), fi_mr_key(mr), FI_UINT32,
                               FI_MSWAP, nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(old, 2u);
  EXPECT_EQ(target[1], 0x0ff2u);
  const uint32_t one = 1;
  ASSERT_EQ(fi_inject_atomic(client_.ep, &one, 1, 0, Addr(&target[2]),
                             fi_mr_key(mr), FI_UINT32, FI_SUM),
            0);
  EXPECT_TRUE(StaysEmpty(client_.cq, 50));
  EXPECT_EQ(target[2], 4u);
  EXPECT_EQ(fi_cntr_read(client_.tx_cntr), 4u);  // each of the 4 ops
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpAtomicTest, ValidQueriesAndQueryAtomic) {
  Connect();
  size_t count = 0;
  EXPECT_EQ(fi_atomicvalid(client_.ep, FI_INT32, FI_SUM, &count), 0);
  EXPECT_GT(count, 0u);
  fi_atomic_attr attr = {};
  ASSERT_EQ(fi_query_atomic(client_.domain, FI_INT32, FI_SUM, &attr, 0), 0);
  EXPECT_EQ(attr.size, 4u);
  EXPECT_EQ(attr.count, count);
  EXPECT_EQ(fi_fetch_atomicvalid(client_.ep, FI_LONG_DOUBLE, FI_ATOMIC_READ,
                                 &count),
            0);
  EXPECT_EQ(fi_compare_atomicvalid(client_.ep, FI_DOUBLE_COMPLEX, FI_CSWAP,
                                   &count),
            0);
  ASSERT_EQ(fi_query_atomic(client_.domain, FI_DOUBLE_COMPLEX, FI_CSWAP_NE,
                            &attr, FI_COMPARE_ATOMIC),
            0);
  EXPECT_EQ(attr.size, 16u);
  EXPECT_EQ(attr.count, count);
  // Combinations that are not in the table.
  EXPECT_EQ(fi_atomicvalid(client_.ep, FI_DOUBLE, FI_BOR, &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_atomicvalid(client_.ep, FI_INT32, FI_ATOMIC_READ, &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_fetch_atomicvalid(client_.ep, FI_INT32, FI_CSWAP, &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_compare_atomicvalid(client_.ep, FI_FLOAT_COMPLEX, FI_CSWAP_GE,
                                   &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_compare_atomicvalid(client_.ep, FI_FLOAT, FI_MSWAP, &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_atomicvalid(client_.ep, FI_UINT128, FI_SUM, &count), 0);
  EXPECT_EQ(count, 4096u / 16);  // 4096 bytes a request
  EXPECT_EQ(fi_query_atomic(client_.domain, FI_FLOAT_COMPLEX, FI_MAX, &attr,
                            FI_FETCH_ATOMIC),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_atomicvalid(client_.ep, FI_INT32, FI_SUM, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_query_atomic(client_.domain, FI_INT32, FI_SUM, &attr,
                            FI_TAGGED),
            -FI_EBADFLAGS);
}

// A refused atomic fails with FI_EACCES and, as a resource-management
// error, takes the connection down (as for RMA, tcp_rma_test.cc). The
// parameter: a fetch into a region without FI_REMOTE_READ (else a wrong
// key).
class TcpAtomicRefusalTest : public TcpAtomicTest,
                             public ::testing::WithParamInterface<bool> {};

TEST_P(TcpAtomicRefusalTest, RefusedAndTheConnectionTornDown) {
  bool fetch = GetParam();
  Connect();
  uint64_t target = 5;
  fid_mr* mr = Expose(&target, sizeof(target), FI_REMOTE_WRITE);
  const uint64_t one = 1;
  uint64_t old = 0;
  int context;
  if (fetch) {
    ASSERT_EQ(fi_fetch_atomic(client_.ep, &one, 1, nullptr, &old, nullptr, 0,
                              Addr(&target), fi_mr_key(mr), FI_UINT64, FI_SUM,
                              &context),
              0);
  } else {
    ASSERT_EQ(fi_atomic(client_.ep, &one, 1, nullptr, 0, Addr(&target),
                        fi_mr_key(mr) + 1, FI_UINT64, FI_SUM, &context),
              0);
  }
  fi_cq_err_entry error = WaitError(client_.cq);
  EXPECT_EQ(error.err, FI_EACCES);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.flags, FI_ATOMIC | (fetch ? FI_READ : FI_WRITE));
  EXPECT_EQ(target, 5u);
  std::vector<char> event;
  EXPECT_EQ(WaitEvent(client_.eq, &event), FI_SHUTDOWN);
  EXPECT_EQ(WaitEvent(server_.eq, &event), FI_SHUTDOWN);
  EXPECT_EQ(fi_atomic(client_.ep, &one, 1, nullptr, 0, Addr(&target),
                      fi_mr_key(mr), FI_UINT64, FI_SUM, nullptr),
            -FI_ENOTCONN);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(WrongKeyOrNoReadAccess, TcpAtomicRefusalTest,
                         ::testing::Bool());

TEST_F(TcpAtomicTest, BadArguments) {
  Connect();
  uint64_t target[32] = {};
  fid_mr* mr = Expose(target, sizeof(target),
                      FI_REMOTE_READ | FI_REMOTE_WRITE);
  uint64_t key = fi_mr_key(mr), addr = Addr(target);
  uint64_t buf[32] = {}, result[32], compare[32] = {};
  fid_ep* ep = client_.ep;
  EXPECT_EQ(fi_atomic(ep, nullptr, 1, nullptr, 0, addr, key, FI_UINT64,
                      FI_SUM, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_atomic(ep, buf, 0, nullptr, 0, addr, key, FI_UINT64, FI_SUM,
                      nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_atomic(ep, buf, SIZE_MAX / 4, nullptr, 0, addr, key, FI_UINT64,
                      FI_SUM, nullptr),
            -FI_EINVAL);
  size_t most = 0;
  ASSERT_EQ(fi_atomicvalid(ep, FI_UINT64, FI_SUM, &most), 0);
  std::vector<uint64_t> big(most + 1);
  EXPECT_EQ(fi_atomic(ep, big.data(), most + 1, nullptr, 0, addr, key,
                      FI_UINT64, FI_SUM, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_atomic(ep, buf, 1, nullptr, 0, addr, key,
                      static_cast<fi_datatype>(99), FI_SUM, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_atomic(ep, buf, 1, nullptr, 0, addr, key, FI_UINT64,
                      static_cast<fi_op>(-1), nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_atomic(ep, buf, 1, nullptr, 0, addr, key, FI_DOUBLE, FI_BXOR,
                      nullptr),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_atomic(ep, buf, 1, nullptr, 0, addr, key, FI_UINT64, FI_CSWAP,
                      nullptr),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_fetch_atomic(ep, buf, 1, nullptr, nullptr, nullptr, 0, addr,
                            key, FI_UINT64, FI_SUM, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_compare_atomic(ep, buf, 1, nullptr, nullptr, nullptr, result,
                              nullptr, 0, addr, key, FI_UINT64, FI_CSWAP,
                              nullptr),
            -FI_EINVAL);
  // 17 elements of 8 bytes are more than inject_size (128).
  EXPECT_EQ(fi_inject_atomic(ep, buf, 17, 0, addr, key, FI_UINT64, FI_SUM),
            -FI_EINVAL);
  fi_ioc iov[5] = {{buf, 1}, {buf + 1, 1}, {buf + 2, 1}, {buf + 3, 1},
                   {buf + 4, 1}};
  fi_rma_ioc rma = {addr, 5, key};
  fi_msg_atomic msg = {iov, nullptr, 5, 0, &rma, 1, FI_UINT64, FI_SUM,
                       nullptr, 0};
  size_t iov_limit = client_.info->tx_attr->iov_limit;
  if (iov_limit < 5) {
    EXPECT_EQ(fi_atomicmsg(ep, &msg, 0), -FI_EINVAL);  // > iov_limit
  }
  msg.iov_count = 1;
  EXPECT_EQ(fi_atomicmsg(ep, &msg, 0), -FI_EINVAL);  // 1 != 5 elements
  rma.count = 1;
  EXPECT_EQ(fi_atomicmsg(ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
  msg.rma_iov_count = 0;
  EXPECT_EQ(fi_atomicmsg(ep, &msg, 0), -FI_EINVAL);
  EXPECT_EQ(fi_atomicmsg(ep, nullptr, 0), -FI_EINVAL);
  msg.rma_iov_count = 1;
  msg.op = FI_CSWAP;
  fi_ioc result_ioc = {result, 1};
  EXPECT_EQ(fi_compare_atomicmsg(ep, &msg, nullptr, nullptr, 0, &result_ioc,
                                 nullptr, 1, 0),
            -FI_EINVAL);  // no compare values
  EXPECT_EQ(fi_fetch_atomicmsg(ep, &msg, &result_ioc, nullptr, 1, 0),
            -FI_EOPNOTSUPP);
  fi_ioc compare_ioc = {compare, 1};
  // And nothing of it reached the target.
  EXPECT_TRUE(StaysEmpty(client_.cq, 20));
  EXPECT_EQ(fi_compare_atomicmsg(ep, &msg, &compare_ioc, nullptr, 1,
                                 &result_ioc, nullptr, 1, 0),
            0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

}  // namespace
}  // namespace fabric

// The atomic table and arithmetic of stream endpoints, element by element:
// every operation on integers (with fi_atomic(3)'s formulas), the real and
// complex types, and which combinations the table refuses.
#include "fabric/providers/stream/atomic_ops.h"

#include <rdma/fi_errno.h>

#include <complex>
#include <vector>

#include "gtest/gtest.h"

namespace fabric {
namespace stream {
namespace {

// Applies `op` to {target} with operand `b` and compare `c`; the result
// value, and the old value in *old.
template <typename T>
T Apply1(int datatype, int op, T target, T b, T c, T* old = nullptr) {
  T before{};
  ApplyAtomic(datatype, op, 1, &target, &b, &c, &before);
  if (old != nullptr) *old = before;
  return target;
}

TEST(AtomicOpsTest, IntegerOperationsFollowTheManPage) {
  struct Case {
    int op;
    int32_t a, b, c, expected;
  };
  const Case cases[] = {
      {FI_MIN, 5, 3, 0, 3},       {FI_MIN, 3, 5, 0, 3},
      {FI_MAX, 5, 3, 0, 5},       {FI_MAX, -1, 7, 0, 7},
      {FI_SUM, 5, -7, 0, -2},     {FI_PROD, -3, 4, 0, -12},
      {FI_LOR, 0, 0, 0, 0},       {FI_LOR, 0, 9, 0, 1},
      {FI_LAND, 4, 9, 0, 1},      {FI_LAND, 4, 0, 0, 0},
      {FI_BOR, 0x0f, 0xf0, 0, 0xff}, {FI_BAND, 0x3c, 0x0f, 0, 0x0c},
      {FI_LXOR, 4, 9, 0, 0},      {FI_LXOR, 0, 9, 0, 1},
      {FI_BXOR, 0x3c, 0x0f, 0, 0x33}, {FI_ATOMIC_READ, 42, 1, 0, 42},
      {FI_ATOMIC_WRITE, 42, 7, 0, 7},
      {FI_CSWAP, 5, 9, 5, 9},     {FI_CSWAP, 5, 9, 4, 5},
      {FI_CSWAP_NE, 5, 9, 4, 9},  {FI_CSWAP_NE, 5, 9, 5, 5},
      {FI_CSWAP_LE, 5, 9, 5, 9},  {FI_CSWAP_LE, 5, 9, 6, 5},
      {FI_CSWAP_LT, 5, 9, 4, 9},  {FI_CSWAP_LT, 5, 9, 5, 5},
      {FI_CSWAP_GE, 5, 9, 5, 9},  {FI_CSWAP_GE, 5, 9, 4, 5},
      {FI_CSWAP_GT, 5, 9, 6, 9},  {FI_CSWAP_GT, 5, 9, 5, 5},
      // (buf & compare) | (addr & ~compare) = 0x0000 | 0x000f
      {FI_MSWAP, 0x00ff, 0x0f0f, 0x00f0, 0x000f},
  };
  for (const Case& c : cases) {
    int32_t old = 0;
    EXPECT_EQ(Apply1<int32_t>(FI_INT32, c.op, c.a, c.b, c.c, &old), c.expected)
        << "op " << c.op << " on " << c.a << ", " << c.b << ", " << c.c;
    EXPECT_EQ(old, c.a);
  }
}

// 128-bit integers: every bit takes part, sums and products wrap at 128
// bits, and the signed type orders negative values below positive ones.
TEST(AtomicOpsTest, Int128OperationsUseAllTheirBits) {
  using U = unsigned __int128;
  using S = __int128;
  const U high = U{1} << 100;
  const U max = ~U{0};
  EXPECT_EQ(AtomicDatatypeSize(FI_INT128), 16u);
  EXPECT_EQ(AtomicDatatypeSize(FI_UINT128), 16u);
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_SUM, high, high, 0) == (U{1} << 101));
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_SUM, max, 2, 0) == 1);  // wraps
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_PROD, U{1} << 64, U{1} << 63, 0) ==
              (U{1} << 127));
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_PROD, U{1} << 64, U{1} << 64, 0) ==
              0);  // wraps
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_BXOR, high | 1, high, 0) == 1);
  EXPECT_TRUE(Apply1<U>(FI_UINT128, FI_MSWAP, 0, max, high, nullptr) ==
              high);
  const S minus = -(S{1} << 90);
  EXPECT_TRUE(Apply1<S>(FI_INT128, FI_MIN, S{1} << 90, minus, 0) == minus);
  EXPECT_TRUE(Apply1<S>(FI_INT128, FI_MAX, minus, S{5}, 0) == 5);
  EXPECT_TRUE(Apply1<S>(FI_INT128, FI_SUM, minus, S{1} << 90, 0) == 0);
  S old = 0;
  EXPECT_TRUE(Apply1<S>(FI_INT128, FI_CSWAP_GT, S{7}, S{9}, S{8}, &old) ==
              9);  // 8 > 7
  EXPECT_TRUE(old == 7);
  EXPECT_TRUE(Apply1<S>(FI_INT128, FI_CSWAP, minus, S{3}, minus + 1) ==
              minus);  // compare differs in the lowest bit only
}

TEST(AtomicOpsTest, IntegersWrapAroundAtTheirWidth) {
  EXPECT_EQ(Apply1<uint8_t>(FI_UINT8, FI_SUM, 250, 10, 0), 4);
  EXPECT_EQ(Apply1<int8_t>(FI_INT8, FI_SUM, 127, 1, 0), -128);
  EXPECT_EQ(Apply1<uint16_t>(FI_UINT16, FI_PROD, 65535, 65535, 0), 1);
  EXPECT_EQ(Apply1<int64_t>(FI_INT64, FI_PROD, INT64_MAX, 2, 0), -2);
  EXPECT_EQ(Apply1<uint64_t>(FI_UINT64, FI_MSWAP, ~0ull, 0, 0xff00), ~0xff00ull);
  EXPECT_EQ(Apply1<int16_t>(FI_INT16, FI_MIN, -5, 3, 0), -5);
  EXPECT_EQ(Apply1<uint32_t>(FI_UINT32, FI_MAX, 1, 0xffffffffu, 0), 0xffffffffu);
}

TEST(AtomicOpsTest, RealsAndComplexNumbers) {
  EXPECT_FLOAT_EQ(Apply1<float>(FI_FLOAT, FI_SUM, 1.5f, 2.25f, 0), 3.75f);
  EXPECT_DOUBLE_EQ(Apply1<double>(FI_DOUBLE, FI_PROD, 1.5, -4, 0), -6);
  EXPECT_DOUBLE_EQ(Apply1<double>(FI_DOUBLE, FI_MIN, 1.5, -4, 0), -4);
  EXPECT_DOUBLE_EQ(Apply1<double>(FI_DOUBLE, FI_CSWAP_GT, 1.5, 9, 2), 9);
  EXPECT_EQ(Apply1<long double>(FI_LONG_DOUBLE, FI_MAX, 1.5L, 2.5L, 0), 2.5L);
  using C = std::complex<double>;
  EXPECT_EQ(Apply1<C>(FI_DOUBLE_COMPLEX, FI_PROD, C(1, 2), C(3, 4), C()),
            C(-5, 10));
  EXPECT_EQ(Apply1<C>(FI_DOUBLE_COMPLEX, FI_CSWAP, C(1, 2), C(3, 4), C(1, 2)),
            C(3, 4));
  using F = std::complex<float>;
  EXPECT_EQ(Apply1<F>(FI_FLOAT_COMPLEX, FI_SUM, F(1, 2), F(3, 4), F()), F(4, 6));
  using L = std::complex<long double>;
  EXPECT_EQ(Apply1<L>(FI_LONG_DOUBLE_COMPLEX, FI_CSWAP_NE, L(1, 2), L(3, 4),
                   L(1, 2)),
            L(1, 2));
}

TEST(AtomicOpsTest, ManyElementsAndUnalignedBuffers) {
  std::vector<char> target(1 + 3 * sizeof(uint64_t));
  std::vector<char> operand(1 + 3 * sizeof(uint64_t));
  std::vector<char> old(1 + 3 * sizeof(uint64_t));
  for (int i = 0; i < 3; ++i) {
    uint64_t a = 100 + i, b = 10 * i;
    memcpy(&target[1 + 8 * i], &a, 8);
    memcpy(&operand[1 + 8 * i], &b, 8);
  }
  ApplyAtomic(FI_UINT64, FI_SUM, 3, &target[1], &operand[1], nullptr, &old[1]);
  for (int i = 0; i < 3; ++i) {
    uint64_t now, before;
    memcpy(&now, &target[1 + 8 * i], 8);
    memcpy(&before, &old[1 + 8 * i], 8);
    EXPECT_EQ(now, 100u + 11 * i);
    EXPECT_EQ(before, 100u + i);
  }
}

TEST(AtomicOpsTest, TheTableAndItsQueries) {
  for (int op = FI_MIN; op < FI_ATOMIC_OP_LAST; ++op) {
    bool compare = op >= FI_CSWAP;
    EXPECT_EQ(AtomicSupported(FI_UINT16, op, AtomicKind::kWrite),
              !compare && op != FI_ATOMIC_READ) << op;
    EXPECT_EQ(AtomicSupported(FI_UINT16, op, AtomicKind::kFetch), !compare)
        << op;
    EXPECT_EQ(AtomicSupported(FI_UINT16, op, AtomicKind::kCompare), compare)
        << op;
  }
  EXPECT_FALSE(AtomicSupported(FI_DOUBLE, FI_BOR, AtomicKind::kWrite));
  EXPECT_FALSE(AtomicSupported(FI_FLOAT, FI_LXOR, AtomicKind::kFetch));
  EXPECT_FALSE(AtomicSupported(FI_FLOAT, FI_MSWAP, AtomicKind::kCompare));
  EXPECT_TRUE(AtomicSupported(FI_FLOAT, FI_CSWAP_LT, AtomicKind::kCompare));
  EXPECT_FALSE(AtomicSupported(FI_FLOAT_COMPLEX, FI_MIN, AtomicKind::kWrite));
  EXPECT_FALSE(
      AtomicSupported(FI_DOUBLE_COMPLEX, FI_CSWAP_LE, AtomicKind::kCompare));
  EXPECT_TRUE(AtomicSupported(FI_LONG_DOUBLE_COMPLEX, FI_SUM,
                              AtomicKind::kWrite));
  EXPECT_TRUE(AtomicSupported(FI_INT128, FI_SUM, AtomicKind::kWrite));
  EXPECT_TRUE(AtomicSupported(FI_UINT128, FI_MSWAP, AtomicKind::kCompare));
  EXPECT_FALSE(AtomicSupported(FI_INT32, FI_ATOMIC_OP_LAST, AtomicKind::kFetch));
  EXPECT_FALSE(AtomicSupported(-1, FI_SUM, AtomicKind::kWrite));

  fi_atomic_attr attr = {};
  EXPECT_EQ(QueryAtomic(FI_DOUBLE, FI_SUM, &attr, 0), 0);
  EXPECT_EQ(attr.size, sizeof(double));
  EXPECT_EQ(attr.count, kMaxAtomicBytes / sizeof(double));
  EXPECT_EQ(QueryAtomic(FI_LONG_DOUBLE_COMPLEX, FI_CSWAP, &attr,
                        FI_COMPARE_ATOMIC), 0);
  EXPECT_EQ(attr.size, 2 * sizeof(long double));
  EXPECT_EQ(QueryAtomic(FI_INT8, FI_ATOMIC_READ, &attr, FI_FETCH_ATOMIC), 0);
  EXPECT_EQ(attr.count, kMaxAtomicBytes);
  EXPECT_EQ(QueryAtomic(FI_INT8, FI_ATOMIC_READ, &attr, 0), -FI_EOPNOTSUPP);
  EXPECT_EQ(QueryAtomic(FI_INT8, FI_CSWAP, &attr, FI_FETCH_ATOMIC),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(QueryAtomic(FI_DATATYPE_LAST + 5, FI_SUM, &attr, 0),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(QueryAtomic(FI_INT8, FI_SUM, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(QueryAtomic(FI_INT8, FI_SUM, &attr, FI_FETCH_ATOMIC |
                                                   FI_COMPARE_ATOMIC),
            -FI_EBADFLAGS);
  EXPECT_EQ(AtomicDatatypeSize(FI_FLOAT_COMPLEX), 8u);
  EXPECT_EQ(AtomicDatatypeSize(FI_VOID), 0u);
}

}  // namespace
}  // namespace stream
}  // namespace fabric

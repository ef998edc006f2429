// RMA and atomics every provider and endpoint type that claims them
// shares: read, write and write with data through the AV's keys, atomics
// on the target's memory, and an atomic with remote CQ data.
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <cstring>
#include <vector>

#include "fabric/conformance/data_transfer_testing.h"
#include "fabric/fixtures/loopback.h"

namespace ofi::conformance {
namespace {

TEST_P(DataTransferTest, RmaWriteReadAndWriteWithData) {
  constexpr size_t kRegion = 1 << 20;
  OPEN_OR_SKIP(FI_RMA, kRegion);
  uint64_t key = fi_mr_key(b().mr);
  std::vector<char> out = Pattern(kRegion / 2, 11);
  ASSERT_EQ(fi_write(a().ep, out.data(), out.size(), nullptr, a().peer,
                     pair_.RegionAddress(100), key, &out),
            0);
  WaitSends(1);
  EXPECT_EQ(memcmp(b().region.data() + 100, out.data(), out.size()), 0);
  std::vector<char> back(out.size());
  ASSERT_EQ(fi_read(a().ep, back.data(), back.size(), nullptr, a().peer,
                    pair_.RegionAddress(100), key, &back),
            0);
  absl::StatusOr<Completion> read = a().Wait();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->entry.flags & FI_READ);
  EXPECT_EQ(back, out);
  // Now that the two have talked (shm's cross-memory attach is probed
  // once connected), a large write may be copied once, straight from the
  // writer's buffer: it lands whole all the same.
  std::vector<char> again = Pattern(kRegion / 2, 12);
  ASSERT_EQ(fi_write(a().ep, again.data(), again.size(), nullptr, a().peer,
                     pair_.RegionAddress(100), key, &again),
            0);
  WaitSends(1);
  EXPECT_EQ(memcmp(b().region.data() + 100, again.data(), again.size()), 0);
  uint64_t word = 0x1122334455667788;
  // FI_RX_CQ_DATA (the suite accepts it; verbs keeps it): the write's data
  // consumes a receive.
  char consumed[8];
  if (((pair_.info().mode | pair_.info().rx_attr->mode) & FI_RX_CQ_DATA) != 0) {
    ASSERT_EQ(fi_recv(b().ep, consumed, sizeof(consumed), nullptr,
                      FI_ADDR_UNSPEC, consumed),
              0);
  }
  ASSERT_EQ(fi_writedata(a().ep, &word, 8, nullptr, 0xd00d, a().peer,
                         pair_.RegionAddress(8), key, nullptr),
            0);
  Completion data = NextReceive(b());
  WaitSends(1);
  EXPECT_EQ(data.entry.data, 0xd00du);
  EXPECT_TRUE(data.entry.flags & FI_REMOTE_CQ_DATA);
  EXPECT_TRUE(data.entry.flags & FI_REMOTE_WRITE);
  uint64_t landed;
  memcpy(&landed, b().region.data() + 8, 8);
  EXPECT_EQ(landed, word);
  // A wrong key or a range outside the region fails the initiator's
  // operation, not the target, whose memory stays as it was.
  const std::vector<char> before = b().region;
  ASSERT_EQ(fi_write(a().ep, &word, 8, nullptr, a().peer,
                     pair_.RegionAddress(0), key + 1, &word),
            0);
  fi_cq_err_entry error = {};
  EXPECT_FALSE(a().Wait(std::chrono::seconds(10), &error).ok());
  EXPECT_EQ(error.op_context, &word);
  EXPECT_NE(error.err, 0);
  EXPECT_TRUE(b().region == before) << "a write with a wrong key landed";
  // A connected endpoint is disabled by such an error (fi_domain(3),
  // resource management): it has no second chance.
  if (pair_.info().ep_attr->type == FI_EP_MSG) return;
  ASSERT_EQ(fi_write(a().ep, &word, 8, nullptr, a().peer,
                     pair_.RegionAddress(kRegion - 4), key, &word),
            0);
  error = {};
  EXPECT_FALSE(a().Wait(std::chrono::seconds(10), &error).ok());
  EXPECT_NE(error.err, 0);
  EXPECT_TRUE(b().region == before) << "a write beyond the region landed";
}

// Large reads and writes of odd sizes at odd offsets, several in flight:
// every byte lands where it belongs (shm copies such payloads from both
// processes at once, in 512 KiB chunks: wire.h kAssist).
TEST_P(DataTransferTest, LargeRmaInFlightTogetherLandsWhole) {
  constexpr size_t kRegion = 8 << 20;
  constexpr size_t kOps = 3;
  constexpr size_t kSize = (2 << 20) + 4097;
  OPEN_OR_SKIP(FI_RMA, kRegion);
  uint64_t key = fi_mr_key(b().mr);
  auto offset = [](size_t i) { return 7 + i * (kSize + 13); };
  // A first exchange: shm probes cross-memory attach once connected.
  uint64_t word = 1;
  ASSERT_EQ(fi_write(a().ep, &word, 8, nullptr, a().peer,
                     pair_.RegionAddress(0), key, &word),
            0);
  WaitSends(1);
  std::vector<std::vector<char>> out;
  for (size_t i = 0; i < kOps; ++i)
    out.push_back(fabric::fixtures::OffsetWords(kSize, i + 1));
  for (size_t i = 0; i < kOps; ++i) {
    ASSERT_EQ(fi_write(a().ep, out[i].data(), kSize, nullptr, a().peer,
                       pair_.RegionAddress(offset(i)), key, &out[i]),
              0);
  }
  WaitSends(kOps);
  for (size_t i = 0; i < kOps; ++i) {
    EXPECT_EQ(memcmp(b().region.data() + offset(i), out[i].data(), kSize), 0)
        << "write " << i;
  }
  std::vector<std::vector<char>> back(kOps, std::vector<char>(kSize));
  for (size_t i = 0; i < kOps; ++i) {
    ASSERT_EQ(fi_read(a().ep, back[i].data(), kSize, nullptr, a().peer,
                      pair_.RegionAddress(offset(i)), key, &back[i]),
              0);
  }
  WaitSends(kOps);
  for (size_t i = 0; i < kOps; ++i) EXPECT_TRUE(back[i] == out[i]) << i;
}

TEST_P(DataTransferTest, AtomicsOnTheTargetsMemory) {
  OPEN_OR_SKIP(FI_ATOMIC, 64);
  uint64_t key = fi_mr_key(b().mr);
  size_t count = 0;
  if (fi_atomicvalid(a().ep, FI_UINT64, FI_SUM, &count) != 0 || count == 0) {
    GTEST_SKIP() << "no FI_SUM on FI_UINT64";
  }
  uint64_t start = 40;
  memcpy(b().region.data(), &start, 8);
  uint64_t add = 2;
  ASSERT_EQ(fi_atomic(a().ep, &add, 1, nullptr, a().peer,
                      pair_.RegionAddress(0), key, FI_UINT64, FI_SUM, &add),
            0);
  WaitSends(1);
  uint64_t old = 0;
  ASSERT_EQ(
      fi_fetch_atomic(a().ep, &add, 1, nullptr, &old, nullptr, a().peer,
                      pair_.RegionAddress(0), key, FI_UINT64, FI_SUM, &old),
      0);
  WaitSends(1);
  EXPECT_EQ(old, 42u);
  uint64_t compare = 44, swap = 7, before = 0;
  if (fi_compare_atomicvalid(a().ep, FI_UINT64, FI_CSWAP, &count) == 0) {
    ASSERT_EQ(
        fi_compare_atomic(a().ep, &swap, 1, nullptr, &compare, nullptr, &before,
                          nullptr, a().peer, pair_.RegionAddress(0), key,
                          FI_UINT64, FI_CSWAP, &before),
        0);
    WaitSends(1);
    EXPECT_EQ(before, 44u);
  }
  uint64_t now;
  memcpy(&now, b().region.data(), 8);
  EXPECT_EQ(now, 7u);
}

TEST_P(DataTransferTest, AnAtomicWithRemoteCqDataReportsIt) {
  OPEN_OR_SKIP(FI_ATOMIC, 64);
  if (pair_.info().domain_attr->cq_data_size == 0) {
    GTEST_SKIP() << "no remote CQ data";
  }
  size_t count = 0;
  if (fi_atomicvalid(a().ep, FI_UINT64, FI_SUM, &count) != 0 || count == 0) {
    GTEST_SKIP() << "no FI_SUM on FI_UINT64";
  }
  uint64_t start = 5, add = 3;
  memcpy(b().region.data() + 8, &start, 8);
  fi_ioc ioc = {&add, 1};
  fi_rma_ioc target = {pair_.RegionAddress(8), 1, fi_mr_key(b().mr)};
  fi_msg_atomic msg = {};
  msg.msg_iov = &ioc;
  msg.iov_count = 1;
  msg.addr = a().peer;
  msg.rma_iov = &target;
  msg.rma_iov_count = 1;
  msg.datatype = FI_UINT64;
  msg.op = FI_SUM;
  msg.context = &add;
  msg.data = 0xa70a;
  ssize_t rc = fi_atomicmsg(a().ep, &msg, FI_REMOTE_CQ_DATA | FI_COMPLETION);
  if (rc == -FI_EOPNOTSUPP &&
      strcmp(pair_.provider_case().provider, "verbs") == 0) {
    GTEST_SKIP() << "verbs atomics carry no remote CQ data (README)";
  }
  ASSERT_EQ(rc, 0);
  Completion data = NextReceive(b());
  EXPECT_TRUE(data.entry.flags & FI_REMOTE_CQ_DATA);
  EXPECT_EQ(data.entry.data, 0xa70au);
  absl::StatusOr<Completion> done = a().Wait();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->entry.op_context, &add);
  uint64_t now;
  memcpy(&now, b().region.data() + 8, 8);
  EXPECT_EQ(now, 8u);
}

// fi_readmsg, fi_writemsg and fi_atomicmsg that count a remote piece but
// give no list of them are refused, and touch nothing.
TEST_P(DataTransferTest, AMsgCallWithoutItsRemoteListIsRefused) {
  OPEN_OR_SKIP(FI_RMA | FI_ATOMIC, 64);
  uint64_t value = 9;
  iovec iov = {&value, sizeof(value)};
  fi_msg_rma rma = {};
  rma.msg_iov = &iov;
  rma.iov_count = 1;
  rma.addr = a().peer;
  rma.rma_iov = nullptr;
  rma.rma_iov_count = 1;
  EXPECT_EQ(fi_writemsg(a().ep, &rma, 0), -FI_EINVAL);
  EXPECT_EQ(fi_readmsg(a().ep, &rma, 0), -FI_EINVAL);
  fi_ioc ioc = {&value, 1};
  fi_msg_atomic atomic = {};
  atomic.msg_iov = &ioc;
  atomic.iov_count = 1;
  atomic.addr = a().peer;
  atomic.rma_iov = nullptr;
  atomic.rma_iov_count = 1;
  atomic.datatype = FI_UINT64;
  atomic.op = FI_SUM;
  EXPECT_EQ(fi_atomicmsg(a().ep, &atomic, 0), -FI_EINVAL);
  EXPECT_EQ(value, 9u);
  absl::StatusOr<std::optional<Completion>> none = a().Poll();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  for (char byte : b().region) EXPECT_EQ(byte, 0);
}

INSTANTIATE_CONFORMANCE_SUITE(DataTransferTest);

}  // namespace
}  // namespace ofi::conformance

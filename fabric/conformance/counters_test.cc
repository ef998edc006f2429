// Counters (fi_cntr(3)) on every provider and endpoint type: bound for
// each fi_ep_bind event, they count what the CQs report: sends and
// receives, writes and reads on the initiator, remote writes and reads on
// the target, and errors in their error count.
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

enum Event { kSend, kRecv, kRead, kWrite, kRemoteRead, kRemoteWrite };

class CountersTest : public PairTest {
 protected:
  // Waits for `count` completions (or error entries) on `side`.
  void Drain(Side& side, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      fi_cq_err_entry error = {};
      absl::StatusOr<Completion> c =
          side.Wait(std::chrono::seconds(10), &error);
      ASSERT_TRUE(c.ok() || error.err != 0) << c.status();
    }
  }
};

TEST_P(CountersTest, CountEveryEventTheyAreBoundFor) {
  PairOptions options;
  // The target's counters count remote reads and writes only with
  // FI_RMA_EVENT (fi_cntr(3)); a provider without it (verbs: the device
  // does RMA without the target's software) is tested without them.
  options.caps = FI_MSG | FI_RMA | FI_RMA_EVENT;
  options.counters = true;
  options.region_size = 4096;
  absl::Status opened = OpenPair(options);
  const bool remote_counters = !absl::IsNotFound(opened);
  if (!remote_counters) {
    options.caps = FI_MSG | FI_RMA;
    OPEN_PAIR_OR_SKIP(options);
  } else {
    ASSERT_TRUE(opened.ok()) << opened;
  }
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  char in[3][8];
  for (auto& buf : in) {
    ASSERT_EQ(fi_recv(b().ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
                      buf),
              0);
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(fi_send(a().ep, "counted", 8, nullptr, a().peer, nullptr), 0);
  }
  ASSERT_NO_FATAL_FAILURE(Drain(a(), 3));
  ASSERT_NO_FATAL_FAILURE(Drain(b(), 3));
  uint64_t key = fi_mr_key(b().mr);
  uint64_t word = 7;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_write(a().ep, &word, 8, nullptr, a().peer,
                       pair_.RegionAddress(0), key, nullptr),
              0);
  }
  ASSERT_EQ(fi_read(a().ep, &word, 8, nullptr, a().peer,
                    pair_.RegionAddress(8), key, nullptr),
            0);
  ASSERT_NO_FATAL_FAILURE(Drain(a(), 3));
  // The target's remote counters move with the data, without a CQ entry:
  // wait for them.
  const uint64_t remote_writes = remote_counters ? 2 : 0;
  if (remote_counters) {
    EXPECT_TRUE(fi_cntr_wait(b().counters[kRemoteWrite], 2, 10000) == 0 ||
                fi_cntr_read(b().counters[kRemoteWrite]) == 2);
  }
  EXPECT_EQ(fi_cntr_read(a().counters[kSend]), 3u);
  EXPECT_EQ(fi_cntr_read(b().counters[kRecv]), 3u);
  EXPECT_EQ(fi_cntr_read(a().counters[kWrite]), 2u);
  EXPECT_EQ(fi_cntr_read(a().counters[kRead]), 1u);
  EXPECT_EQ(fi_cntr_read(b().counters[kRemoteWrite]), remote_writes);
  EXPECT_EQ(fi_cntr_read(b().counters[kRemoteRead]), remote_counters ? 1u : 0u);
  EXPECT_EQ(fi_cntr_read(a().counters[kRecv]), 0u);
  EXPECT_EQ(fi_cntr_read(b().counters[kSend]), 0u);
  // A write the target refuses counts as a write error, not a write.
  ASSERT_EQ(fi_write(a().ep, &word, 8, nullptr, a().peer,
                     pair_.RegionAddress(0), key + 1, nullptr),
            0);
  ASSERT_NO_FATAL_FAILURE(Drain(a(), 1));
  EXPECT_EQ(fi_cntr_readerr(a().counters[kWrite]), 1u);
  EXPECT_EQ(fi_cntr_read(a().counters[kWrite]), 2u);
  EXPECT_EQ(fi_cntr_read(b().counters[kRemoteWrite]), remote_writes);
}

INSTANTIATE_CONFORMANCE_SUITE(CountersTest);

}  // namespace
}  // namespace ofi::conformance

// Fixed seeds of the wire fuzz driver (tcp_wire_fuzz.h), so that every test
// run (asan included) pushes a few thousand malformed streams through the
// real decoders.
#include "fabric/providers/tcp/tcp_wire_fuzz.h"

#include <string>

#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

TEST(TcpWireFuzz, FixedSeeds) {
  for (uint64_t seed : {1, 2, 3, 20261123}) {
    FuzzStats stats;
    std::string error;
    ASSERT_TRUE(RunWireFuzz(seed, 1500, {}, &stats, &error)) << error;
    EXPECT_EQ(stats.streams, 1500u);
    // Both outcomes occur, or the mutations went wrong.
    EXPECT_GT(stats.closed_clean, 50u) << "seed " << seed;
    EXPECT_GT(stats.closed_eio, 50u) << "seed " << seed;
    EXPECT_GT(stats.cm_done, 20u) << "seed " << seed;
    EXPECT_GT(stats.cm_failed, 20u) << "seed " << seed;
  }
}

// A corpus stream is mutated, not ignored: all-valid corpus input still
// yields refusals from the bit flips.
TEST(TcpWireFuzz, Corpus) {
  std::string valid(40, '\0');
  valid[0] = 1;  // kMsg, no payload
  FuzzStats stats;
  std::string error;
  ASSERT_TRUE(RunWireFuzz(7, 1000, {valid + valid}, &stats, &error)) << error;
  EXPECT_GT(stats.closed_eio, 0u);
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

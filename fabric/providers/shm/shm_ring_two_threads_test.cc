// Producer and consumer in two threads of one process: 64 MiB in chunks of
// random sizes, every byte checked (and, under --config=tsan, every access
// checked for races).
#include <stdlib.h>

#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fabric/providers/shm/ring_stream_testing.h"
#include "fabric/providers/shm/shm_ring.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

constexpr uint64_t kTotal = uint64_t{64} << 20;
constexpr size_t kCapacity = 64 << 10;

TEST(ShmRingTwoThreadsTest, Streams64MiBIntact) {
  void* mem = aligned_alloc(64, ByteRing::BytesNeeded(kCapacity));
  ASSERT_NE(mem, nullptr);
  ByteRing producer = ByteRing::Init(mem, kCapacity).value();
  ByteRing consumer =
      ByteRing::Attach(mem, ByteRing::BytesNeeded(kCapacity)).value();
  absl::Time deadline = absl::Now() + absl::Seconds(15);

  StreamResult sent;
  std::thread writer([&] {
    sent =
        ProduceStream(producer, kTotal, /*seed=*/42, kCapacity + 999, deadline);
  });
  StreamResult received =
      ConsumeStream(consumer, /*seed=*/42, kCapacity / 3 + 1, deadline);
  writer.join();
  free(mem);

  EXPECT_FALSE(sent.timed_out || received.timed_out);
  EXPECT_FALSE(sent.corrupt || received.corrupt);
  EXPECT_FALSE(sent.peer_closed);
  EXPECT_EQ(sent.bytes, kTotal);
  EXPECT_EQ(received.bytes, kTotal);
  EXPECT_EQ(received.mismatches, 0u)
      << "first at byte " << received.first_mismatch;
}

}  // namespace
}  // namespace shm
}  // namespace fabric

// Producer and consumer in two processes: the parent creates a segment and
// lays out a ring in it; a forked child opens the segment by name (mapping
// it at its own address) and reads 64 MiB of chunks of random sizes,
// checking every byte.
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fabric/providers/shm/ring_stream_testing.h"
#include "fabric/providers/shm/shm_ring.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/shm/shm_testing.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

constexpr uint64_t kTotal = uint64_t{64} << 20;
constexpr size_t kCapacity = 64 << 10;
constexpr uint64_t kSeed = 7;

// The child's exit codes.
enum ChildExit { kOk = 0, kOpenFailed, kAttachFailed, kBadStream };

int RunConsumer(const std::string& name, absl::Time deadline) {
  absl::StatusOr<Segment> segment = Segment::Open(name);
  if (!segment.ok()) return kOpenFailed;
  absl::StatusOr<ByteRing> ring =
      ByteRing::Attach(segment->payload(), segment->payload_size());
  if (!ring.ok()) return kAttachFailed;
  StreamResult got = ConsumeStream(*ring, kSeed, kCapacity / 5 + 3, deadline);
  bool ok = got.bytes == kTotal && got.mismatches == 0 && !got.timed_out &&
            !got.corrupt;
  return ok ? kOk : kBadStream;
}

TEST(ShmRingTwoProcessesTest, Streams64MiBThroughASegment) {
  const std::string prefix = TestPrefix();
  absl::StatusOr<Segment> segment =
      Segment::Create(SegmentName(prefix, 0),
                      kSegmentPayloadOffset + ByteRing::BytesNeeded(kCapacity));
  ASSERT_TRUE(segment.ok()) << segment.status();
  ByteRing producer = ByteRing::Init(segment->payload(), kCapacity).value();
  absl::Time deadline = absl::Now() + absl::Seconds(15);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(RunConsumer(segment->name(), deadline));

  StreamResult sent =
      ProduceStream(producer, kTotal, kSeed, 3 * kCapacity + 17, deadline);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(sent.timed_out);
  EXPECT_FALSE(sent.peer_closed);
  EXPECT_EQ(sent.bytes, kTotal);
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(WEXITSTATUS(status), kOk);
  EXPECT_TRUE(producer.reader_closed());
}

}  // namespace
}  // namespace shm
}  // namespace fabric

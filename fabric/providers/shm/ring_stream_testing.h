// File: fabric/providers/shm/ring_stream_testing.h
//
// Streaming a known byte pattern through a ByteRing in chunks of random
// sizes, for tests whose producer and consumer are two threads or two
// processes. Byte i of a stream is StreamByte(seed, i), so the consumer
// checks each byte where it lands, not just a sum at the end.
#ifndef FABRIC_PROVIDERS_SHM_RING_STREAM_TESTING_H_
#define FABRIC_PROVIDERS_SHM_RING_STREAM_TESTING_H_

#include <stdint.h>

#include "absl/time/time.h"
#include "fabric/providers/shm/shm_ring.h"

namespace fabric {
namespace shm {

uint8_t StreamByte(uint64_t seed, uint64_t offset);

struct StreamResult {
  uint64_t bytes = 0;       // moved through the ring
  uint64_t mismatches = 0;  // consumer: bytes that differed from the pattern
  uint64_t first_mismatch = UINT64_MAX;
  bool timed_out = false;
  bool corrupt = false;
  bool peer_closed = false;  // producer: the reader closed before the end
};

// Writes `total` pattern bytes in chunks of 1..max_chunk bytes, each chunk
// as two iovecs written with Write's skip until it is all in; then closes
// the writer. Gives up at `deadline` or when the reader closes.
StreamResult ProduceStream(ByteRing& ring, uint64_t total, uint64_t seed,
                           size_t max_chunk, absl::Time deadline);

// Reads into two iovecs of random sizes (1..max_chunk in all) until the
// writer closes and the ring is drained, checking every byte; then closes
// the reader. Gives up at `deadline`.
StreamResult ConsumeStream(ByteRing& ring, uint64_t seed, size_t max_chunk,
                           absl::Time deadline);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_RING_STREAM_TESTING_H_

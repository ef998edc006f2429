#include "fabric/providers/shm/ring_stream_testing.h"

#include <sys/uio.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

namespace fabric {
namespace shm {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}

// Two iovecs over buf[0..len), split at a random point (either may be empty).
void SplitInTwo(char* buf, size_t len, std::mt19937_64& rng, iovec* iov) {
  size_t split = std::uniform_int_distribution<size_t>(0, len)(rng);
  iov[0] = {buf, split};
  iov[1] = {buf + split, len - split};
}

}  // namespace

uint8_t StreamByte(uint64_t seed, uint64_t offset) {
  return static_cast<uint8_t>(SplitMix64(seed ^ (offset >> 3)) >>
                              (8 * (offset & 7)));
}

StreamResult ProduceStream(ByteRing& ring, uint64_t total, uint64_t seed,
                           size_t max_chunk, absl::Time deadline) {
  std::mt19937_64 rng(seed);
  std::vector<char> chunk(max_chunk);
  StreamResult result;
  while (result.bytes < total) {
    size_t len = std::min<uint64_t>(
        std::uniform_int_distribution<size_t>(1, max_chunk)(rng),
        total - result.bytes);
    for (size_t i = 0; i < len; ++i) {
      chunk[i] = static_cast<char>(StreamByte(seed, result.bytes + i));
    }
    iovec iov[2];
    SplitInTwo(chunk.data(), len, rng, iov);
    size_t sent = 0;
    while (sent < len) {
      size_t n = ring.Write(iov, 2, sent);
      sent += n;
      if (n != 0) continue;
      if (ring.corrupt()) {
        result.corrupt = true;
        return result;
      }
      if (ring.reader_closed()) {
        result.peer_closed = true;
        return result;
      }
      if (absl::Now() > deadline) {
        result.timed_out = true;
        return result;
      }
      std::this_thread::yield();
    }
    result.bytes += len;
  }
  ring.CloseWriter();
  return result;
}

StreamResult ConsumeStream(ByteRing& ring, uint64_t seed, size_t max_chunk,
                           absl::Time deadline) {
  std::mt19937_64 rng(~seed);
  std::vector<char> buf(max_chunk);
  StreamResult result;
  while (!ring.AtEnd()) {
    size_t len = std::uniform_int_distribution<size_t>(1, max_chunk)(rng);
    iovec iov[2];
    SplitInTwo(buf.data(), len, rng, iov);
    size_t n = ring.Read(iov, 2);
    for (size_t i = 0; i < n; ++i) {
      if (static_cast<uint8_t>(buf[i]) != StreamByte(seed, result.bytes + i)) {
        result.first_mismatch =
            std::min(result.first_mismatch, result.bytes + i);
        ++result.mismatches;
      }
    }
    result.bytes += n;
    if (n != 0) continue;
    if (ring.corrupt()) {
      result.corrupt = true;
      break;
    }
    if (absl::Now() > deadline) {
      result.timed_out = true;
      break;
    }
    std::this_thread::yield();
  }
  ring.CloseReader();
  return result;
}

}  // namespace shm
}  // namespace fabric

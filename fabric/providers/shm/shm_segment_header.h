// File: fabric/providers/shm/shm_segment_header.h
//
// The header at offset 0 of every shm segment, and its validation. The
// creator fills it and stores `ready` last, with release ordering; anyone
// else treats it as untrusted input (another process wrote it) and reads it
// only through CheckSegmentHeader, which copies what it validated.
//
//   WriteSegmentHeader(base, SegmentInfo{...});   // the creator
//   absl::StatusOr<SegmentInfo> info =
//       CheckSegmentHeader(base, file_size);        // anyone else
#ifndef FABRIC_PROVIDERS_SHM_SHM_SEGMENT_HEADER_H_
#define FABRIC_PROVIDERS_SHM_SHM_SEGMENT_HEADER_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <atomic>

#include "absl/status/statusor.h"

namespace fabric {
namespace shm {

inline constexpr uint64_t kSegmentMagic = 0x6d68732d63697266;  // "fric-shm"
// 3: a reader may ask for help copying a read's data (stream/wire.h
// kAssistsReadData), which version 2 refuses. 4: rings carry chunks with
// control words (shm_ring.h) instead of bare bytes.
inline constexpr uint32_t kSegmentVersion = 4;

// Where a segment's payload starts (one cache line after the start).
inline constexpr size_t kSegmentPayloadOffset = 64;

struct SegmentHeader {
  uint64_t magic;               // kSegmentMagic
  uint32_t version;             // kSegmentVersion
  int32_t creator_pid;          // > 0
  uint64_t size;                // the whole segment, header included
  uint64_t creator_start_time;  // field 22 of /proc/<creator_pid>/stat
  uint64_t creator_pid_ns;      // the namespace creator_pid is a pid in
  std::atomic<uint32_t> ready;  // 0 while being filled, then 1
};
static_assert(sizeof(SegmentHeader) <= kSegmentPayloadOffset);
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the ready flag is shared between processes");

// What a valid header says: who created the segment, and its size.
struct SegmentInfo {
  pid_t pid;
  uint64_t start_time;
  uint64_t pid_ns;
  uint64_t size;
};

// Fills the header at `base` (mapped, zeroed, info.size bytes) and
// publishes it.
void WriteSegmentHeader(void* base, const SegmentInfo& info);

// Validates the header at `base`, which maps at least the header of a file
// of `file_size` bytes: FI_EAGAIN when not yet ready, FI_EINVAL when it is
// not a segment header (a file shorter than it, bad magic, ready not 0 or 1,
// a size below the header or above `file_size`, a pid not > 0),
// FI_EOPNOTSUPP for another version.
absl::StatusOr<SegmentInfo> CheckSegmentHeader(const void* base,
                                               uint64_t file_size);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_SEGMENT_HEADER_H_

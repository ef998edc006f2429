// File: fabric/providers/shm/shm_reclaim.h
//
// Removing the segments that crashed processes left in /dev/shm. A segment's
// name is unlinked only by its creator's Segment; a process killed before
// that leaves the name, and its memory, behind until someone reclaims it.
//
//   absl::StatusOr<int> removed = ReclaimStale(kDefaultSegmentPrefix);
#ifndef FABRIC_PROVIDERS_SHM_SHM_RECLAIM_H_
#define FABRIC_PROVIDERS_SHM_SHM_RECLAIM_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fabric {
namespace shm {

// Unlinks each segment in /dev/shm named as SegmentName(prefix, n) names
// them, owned by our uid, whose creator is dead: the header's pid no longer
// runs, or runs a process with another start time. A creator in another
// pid namespace (a container sharing /dev/shm) cannot be judged and its
// segment is kept. A segment whose header is malformed or not ready is
// removed only when the pid in its name is dead here. Segments of live
// processes and of other users are never touched.
// Logs each removal; returns how many were removed.
absl::StatusOr<int> ReclaimStale(absl::string_view prefix);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_RECLAIM_H_

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

// Unlinks each segment in /dev/shm named "<prefix>-<our uid>-...", owned by
// our uid, whose creator is gone: it no longer holds its liveness lock
// (IsSegmentInUse), which holds across pid namespaces (containers sharing
// /dev/shm). A segment whose header is malformed or not ready is removed
// when the pid in its name (the form SegmentName gives) is gone, or, with
// no pid in its name, once it is older than any creator takes. With
// kLivenessPrefix it removes the liveness locks of processes that are gone.
// Segments of live processes and of other users are never touched.
// Logs each removal; returns how many were removed.
absl::StatusOr<int> ReclaimStale(absl::string_view prefix);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_RECLAIM_H_

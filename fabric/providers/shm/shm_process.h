// File: fabric/providers/shm/shm_process.h
//
// Who a process is, across pid reuse: its pid and its start time (field 22
// of /proc/<pid>/stat, clock ticks since boot). A segment's header records
// its creator's pair, so that a later process given the same pid is not
// mistaken for the creator.
//
//   absl::StatusOr<uint64_t> start = ProcessStartTime(getpid());
//   ...
//   if (!IsAlive(peer_pid, peer_start_time)) { /* the peer is gone */ }
#ifndef FABRIC_PROVIDERS_SHM_SHM_PROCESS_H_
#define FABRIC_PROVIDERS_SHM_SHM_PROCESS_H_

#include <stdint.h>
#include <sys/types.h>

#include "absl/status/statusor.h"

namespace fabric {
namespace shm {

// This process's pid namespace (the inode of /proc/self/ns/pid). Pids and
// the liveness functions below mean something only inside one namespace;
// containers that share /dev/shm may run processes of another.
absl::StatusOr<uint64_t> OwnPidNamespace();

// The inode of this process's network namespace (/proc/self/ns/net).
absl::StatusOr<uint64_t> OwnNetworkNamespace();

// The start time of process `pid` (field 22 of /proc/<pid>/stat);
// FI_ENOENT when there is no such process.
absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid);

// True while process `pid` exists and is not a zombie (a zombie has already
// dropped its mappings and runs no code).
bool IsPidAlive(pid_t pid);

// True while the process `pid` that started at `start_time` is alive: a
// process now holding that pid but started at another time is not it.
bool IsAlive(pid_t pid, uint64_t start_time);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_PROCESS_H_

// File: fabric/providers/shm/shm_testing.h
//
// Test helpers for segments: a /dev/shm name prefix of the running test's
// own, listing and removing the names under it, and writing a segment file
// byte by byte as a broken or hostile peer would.
#ifndef FABRIC_PROVIDERS_SHM_SHM_TESTING_H_
#define FABRIC_PROVIDERS_SHM_SHM_TESTING_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/shm/shm_segment_header.h"

namespace fabric {
namespace shm {

// "/fabric-shmtest-<random>-<test name>": no other test's names start with
// it, also in another pid namespace sharing /dev/shm (a sandbox: the same
// pid there).
std::string TestPrefix();

// The shm names ("/...") in /dev/shm that start with `prefix`, sorted.
std::vector<std::string> ShmNamesWithPrefix(absl::string_view prefix);

// Unlinks every name ShmNamesWithPrefix(prefix) lists.
void RemoveShmNamesWithPrefix(absl::string_view prefix);

// Creates shm `name` (exclusive) holding `bytes`, then sets `mode`.
absl::Status WriteShmFile(const std::string& name, absl::string_view bytes,
                          mode_t mode = 0600);

// 127.0.0.1:`port`, as endpoint addresses name shm endpoints.
IpAddress LoopbackAddress(uint16_t port);

// A segment of `size` bytes made by `pid` started at `start_time`, in our
// pid namespace.
SegmentInfo InfoInOurNamespace(uint64_t size, pid_t pid, uint64_t start_time);

// The bytes of a valid, ready header for `info`, followed by zeros up to
// info.size.
std::string SegmentBytes(const SegmentInfo& info);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_TESTING_H_

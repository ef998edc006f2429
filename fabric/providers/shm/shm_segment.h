// File: fabric/providers/shm/shm_segment.h
//
// A named POSIX shared-memory segment (/dev/shm/<name>) that processes of
// one user map to talk to each other. The creator makes it (mode 0600, all
// of its memory allocated up front), fills its header (shm_segment_header.h)
// and unlinks the name when its Segment is destroyed; others Open it by name
// and get it only when the file and header check out.
//
//   absl::Status space = SpaceCheck(bytes);   // in fi_getinfo, say
//   absl::StatusOr<Segment> mine =
//       Segment::Create(SegmentName(kDefaultSegmentPrefix, 0), bytes);
//   ...                                        // in the peer:
//   absl::StatusOr<Segment> theirs = Segment::Open(name_from_peer);
//   void* rings = theirs->payload();
#ifndef FABRIC_PROVIDERS_SHM_SHM_SEGMENT_H_
#define FABRIC_PROVIDERS_SHM_SHM_SEGMENT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fabric/providers/shm/shm_segment_header.h"

namespace fabric {
namespace shm {

inline constexpr char kDefaultSegmentPrefix[] = "/fabric-shm";
// A process that creates segments holds one liveness lock for its life:
// "<kLivenessPrefix>-<uid>-<pid>-<start time>-<pid namespace>", flock'd by
// one fd (not an fd per segment: a process with many peers would run out
// of fds).
inline constexpr char kLivenessPrefix[] = "/fabric-shm-live";

// "<prefix>-<uid>-<pid namespace>-<pid>-<n>" with this process's effective
// uid, pid namespace (OwnPidNamespace, 0 when unknown) and pid: processes
// of two containers that share /dev/shm may have the same pid.
// `prefix` starts with '/' and has no other '/'.
std::string SegmentName(absl::string_view prefix, uint64_t n);

// The pid in `name` when it has the form SegmentName(prefix, n) gives (any
// uid and n) and names this process's pid namespace; nullopt otherwise (a
// pid of another namespace says nothing here).
std::optional<pid_t> PidFromSegmentName(absl::string_view prefix,
                                        absl::string_view name);

// OK when /dev/shm has `size` bytes free; FI_ENOSPC "needs N bytes, M free"
// when not.
absl::Status SpaceCheck(uint64_t size);

// A mapped segment; movable, not copyable. The creator's object unlinks the
// name when destroyed (only in the creating process, not in a forked child
// that inherited a copy); every object unmaps.
class Segment {
 public:
  // Creates segment `name` of `size` bytes (header included, at least
  // kSegmentPayloadOffset): exclusive, mode 0600 whatever the umask, all
  // memory allocated now, so that a full /dev/shm fails here (FI_ENOSPC with
  // the bytes needed and free) and not as a SIGBUS on a later touch. On
  // failure nothing is left in /dev/shm.
  static absl::StatusOr<Segment> Create(const std::string& name, size_t size);

  // Maps the existing segment `name` read-write. Refuses, with a log line,
  // a segment that is not ours to trust: FI_EACCES when another uid owns it
  // or its mode is not 0600; FI_EAGAIN while its creator is still filling
  // it (empty file, `ready` not set); FI_EINVAL when it is shorter than its
  // header or than the size the header gives, or has a bad magic;
  // FI_EOPNOTSUPP for another layout version. A peer of our own uid that
  // truncates the file after this can still make a touch fault: such a
  // peer could as well ptrace us.
  static absl::StatusOr<Segment> Open(const std::string& name);

  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&& other) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();

  const std::string& name() const { return name_; }
  // The header's size: the whole segment.
  size_t size() const { return info_.size; }
  void* base() const { return base_; }
  // What follows the header: kSegmentPayloadOffset into the segment.
  void* payload() const {
    return static_cast<char*>(base_) + kSegmentPayloadOffset;
  }
  size_t payload_size() const { return size() - kSegmentPayloadOffset; }
  // The creator, as its header said when this object was made.
  pid_t creator_pid() const { return info_.pid; }
  uint64_t creator_start_time() const { return info_.start_time; }
  // The pid namespace creator_pid() is a pid in: compare it with
  // OwnPidNamespace() before asking IsAlive about the creator.
  uint64_t creator_pid_ns() const { return info_.pid_ns; }
  bool is_creator() const { return is_creator_; }

 private:
  Segment(std::string name, void* base, size_t mapped_size, SegmentInfo info,
          bool is_creator);
  void Release();

  std::string name_;
  void* base_ = nullptr;
  size_t mapped_size_ = 0;
  SegmentInfo info_{};
  bool is_creator_ = false;
};

// True while the creator of segment `name` holds it: it lives (or a child
// it forked does) and has not destroyed its Segment (which removes the
// name). The flock on the creator's liveness lock says so, which works
// across pid namespaces, where pids do not. A segment whose header is not
// published yet counts as in use for kUnfinishedGraceSeconds (10 s) after
// its file was made. False when there is no such segment.
bool IsSegmentInUse(const std::string& name);
// The same for a segment already opened: its file's stat and what its
// header said (ReadSegmentHeader).
bool IsSegmentInUse(const struct stat& file,
                    const absl::StatusOr<SegmentInfo>& header);

// Whether someone holds a flock on the /dev/shm file `name` (a liveness
// lock's owner).
bool IsFlocked(const std::string& name);

// What the header of the segment open at `fd` (`size` bytes) says, read
// with pread (a file cut short reads short instead of faulting).
absl::StatusOr<SegmentInfo> ReadSegmentHeader(int fd, uint64_t size);


}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_SEGMENT_H_

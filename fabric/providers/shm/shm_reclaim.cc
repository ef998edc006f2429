#include "fabric/providers/shm/shm_reclaim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/log.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_process.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/shm/shm_segment_header.h"

namespace fabric {
namespace shm {
namespace {

// Whether segment `name` is ours and was left by a process that is gone;
// why, in *why.
bool IsStale(const std::string& name, absl::string_view prefix,
             std::string* why) {
  int fd = shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return false;
  }
  absl::StatusOr<SegmentInfo> creator =
      ReadSegmentHeader(fd, static_cast<uint64_t>(st.st_size));
  close(fd);
  if (creator.ok()) {
    // Its creator's liveness lock says whether it still holds it.
    if (IsSegmentInUse(st, creator)) return false;
    *why = absl::StrCat("creator pid ", creator->pid, " no longer holds it");
    return true;
  }
  // A liveness lock (no header) whose process lives.
  if (IsFlocked(name)) return false;
  // Unfinished, or a liveness lock nobody holds: its creator died making
  // it, or is still at it. A pid in the name tells which; without one,
  // only a file older than any creator takes is left behind.
  std::optional<pid_t> name_pid = PidFromSegmentName(prefix, name);
  if (name_pid.has_value() ? IsPidAlive(*name_pid)
                           : IsSegmentInUse(st, creator)) {
    return false;
  }
  *why = absl::StrCat("header unusable (", creator.status().message(),
                      ") and its creator gone");
  return true;
}

}  // namespace

absl::StatusOr<int> ReclaimStale(absl::string_view prefix) {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) {
    return FiError(errno, absl::StrCat("opendir(/dev/shm): ", strerror(errno)));
  }
  // "<prefix>-<uid>-": our user's segments of this kind.
  std::string mine = absl::StrCat(prefix, "-", geteuid(), "-");
  int removed = 0;
  while (struct dirent* entry = readdir(dir)) {
    std::string name = absl::StrCat("/", entry->d_name);
    if (!absl::StartsWith(name, mine)) continue;
    std::string why;
    if (!IsStale(name, prefix, &why)) continue;
    if (shm_unlink(name.c_str()) != 0) continue;  // another reclaimer won
    FABRIC_LOG_INFO(nullptr, FI_LOG_DOMAIN,
                    "removed stale shm segment %s: %s\n", name.c_str(),
                    why.c_str());
    ++removed;
  }
  closedir(dir);
  return removed;
}

}  // namespace shm
}  // namespace fabric

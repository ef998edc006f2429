#include "fabric/providers/shm/shm_process.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace shm {
namespace {

// What /proc/<pid>/stat says after the command name: field 3 (state) on.
struct StatFields {
  char state;
  uint64_t start_time;
};

absl::StatusOr<StatFields> ReadStat(pid_t pid) {
  if (pid <= 0) return FiError(FI_EINVAL, absl::StrCat("bad pid ", pid));
  std::string path = absl::StrCat("/proc/", pid, "/stat");
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return FiError(err == ENOENT ? FI_ENOENT : err,
                   absl::StrCat(path, ": ", strerror(err)));
  }
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return FiError(FI_ENOENT, absl::StrCat(path, ": empty"));
  absl::string_view text(buf, static_cast<size_t>(n));
  // The command name (field 2) is in parentheses and may itself hold spaces
  // and ')', so the fields start after the last ')'.
  size_t close_paren = text.rfind(')');
  if (close_paren == absl::string_view::npos) {
    return FiError(FI_EIO, absl::StrCat(path, ": no ')'"));
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(text.substr(close_paren + 1), ' ', absl::SkipEmpty());
  constexpr size_t kStartTimeIndex = 22 - 3;  // fields[0] is field 3
  StatFields result;
  if (fields.size() <= kStartTimeIndex || fields[0].size() != 1 ||
      !absl::SimpleAtoi(fields[kStartTimeIndex], &result.start_time)) {
    return FiError(FI_EIO, absl::StrCat(path, ": unexpected format"));
  }
  result.state = fields[0][0];
  return result;
}

// A zombie ('Z', or 'X' while being reaped) has already dropped its
// mappings and runs no code: as good as dead.
bool IsGone(char state) { return state == 'Z' || state == 'X'; }

// `start_time` null: any process holding `pid` counts.
bool Alive(pid_t pid, const uint64_t* start_time) {
  if (pid <= 0) return false;
  // EPERM (another user's process) still means it exists.
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  absl::StatusOr<StatFields> stat = ReadStat(pid);
  // Exited since kill(): dead. Any other read error: alive, the safe answer.
  if (!stat.ok()) return ToFiErrno(stat.status()) != -FI_ENOENT;
  if (IsGone(stat->state)) return false;
  return start_time == nullptr || stat->start_time == *start_time;
}

}  // namespace

namespace {

absl::StatusOr<uint64_t> OwnNamespace(const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    int err = errno;
    return FiError(err, absl::StrCat(path, ": ", strerror(err)));
  }
  return static_cast<uint64_t>(st.st_ino);
}

}  // namespace

absl::StatusOr<uint64_t> OwnPidNamespace() {
  return OwnNamespace("/proc/self/ns/pid");
}

absl::StatusOr<uint64_t> OwnNetworkNamespace() {
  return OwnNamespace("/proc/self/ns/net");
}

absl::StatusOr<uint64_t> ProcessStartTime(pid_t pid) {
  absl::StatusOr<StatFields> stat = ReadStat(pid);
  if (!stat.ok()) return stat.status();
  return stat->start_time;
}

bool IsPidAlive(pid_t pid) { return Alive(pid, nullptr); }

bool IsAlive(pid_t pid, uint64_t start_time) { return Alive(pid, &start_time); }

}  // namespace shm
}  // namespace fabric

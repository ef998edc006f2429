#include "fabric/providers/shm/shm_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <ctime>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "fabric/api/config/log.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_process.h"

namespace fabric {
namespace shm {
namespace {

constexpr char kShmDir[] = "/dev/shm";
constexpr mode_t kSegmentMode = 0600;

absl::Status ErrnoError(int err, absl::string_view call) {
  return FiError(err, absl::StrCat(call, ": ", strerror(err)));
}

// `status` with the segment's name in front, logged.
absl::Status Fail(const std::string& name, const absl::Status& status) {
  std::string message =
      absl::StrCat("shm segment ", name, ": ", status.message());
  FABRIC_LOG_WARN(nullptr, FI_LOG_DOMAIN, "%s\n", message.c_str());
  return FiError(-ToFiErrno(status), message);
}

absl::StatusOr<uint64_t> ShmFreeBytes() {
  struct statvfs vfs;
  if (statvfs(kShmDir, &vfs) != 0) {
    return ErrnoError(errno, "statvfs(/dev/shm)");
  }
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

absl::Status NoSpace(uint64_t size, absl::string_view free_bytes) {
  return FiError(FI_ENOSPC, absl::StrCat("/dev/shm needs ", size, " bytes, ",
                                         free_bytes, " free"));
}

// Sets the mode and size of the new file behind `fd`, then maps it.
absl::StatusOr<void*> SizeAndMap(int fd, size_t size) {
  // shm_open applied the umask; the mode must be exactly 0600 either way.
  if (fchmod(fd, kSegmentMode) != 0) return ErrnoError(errno, "fchmod");
  // Allocates every page now: tmpfs would otherwise hand them out on first
  // touch, and a full /dev/shm would then be a SIGBUS.
  int err = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (err == ENOSPC) {
    absl::StatusOr<uint64_t> free_bytes = ShmFreeBytes();
    return NoSpace(size, free_bytes.ok() ? absl::StrCat(*free_bytes)
                                         : std::string("unknown"));
  }
  if (err != 0) return ErrnoError(err, "posix_fallocate");
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return ErrnoError(errno, "mmap");
  return base;
}

// Checks that the file behind `fd` is one we may trust; its size.
absl::StatusOr<size_t> CheckFile(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoError(errno, "fstat");
  if (!S_ISREG(st.st_mode)) return FiError(FI_EINVAL, "not a regular file");
  if (st.st_uid != geteuid()) {
    return FiError(FI_EACCES, absl::StrCat("owned by uid ", st.st_uid,
                                           ", not by us (", geteuid(), ")"));
  }
  mode_t mode = st.st_mode & 07777;
  if (mode != kSegmentMode) {
    return FiError(FI_EACCES, absl::StrFormat("mode %04o, not 0600", mode));
  }
  // The creator sizes the file right after creating it.
  if (st.st_size == 0) return FiError(FI_EAGAIN, "empty, not sized yet");
  if (static_cast<size_t>(st.st_size) < kSegmentPayloadOffset) {
    return FiError(FI_EINVAL, absl::StrCat(st.st_size,
                                           " bytes, shorter than "
                                           "its header"));
  }
  return static_cast<size_t>(st.st_size);
}

// The creator's liveness lock: "<kLivenessPrefix>-<uid>-<pid>-<start>-<pid
// namespace>" (processes of two pid namespaces may share a pid, and even
// what /proc says of its start).
std::string LivenessLockName(uid_t uid, const SegmentInfo& creator) {
  return absl::StrCat(kLivenessPrefix, "-", uid, "-", creator.pid, "-",
                      creator.start_time, "-", creator.pid_ns);
}

// This process's liveness lock, taken once per process (a forked child
// takes its own): an exclusive flock on its file, held by one fd until the
// process ends, whatever the number of segments it creates.
// The lock this process holds: its pid (0 before the first segment; a
// forked child's is its parent's until it takes its own) and name.
struct LivenessLock {
  std::mutex mutex;
  pid_t holder = 0;
  std::string name;
};
LivenessLock& OwnLivenessLock() {
  static auto* lock = new LivenessLock;  // read at exit: never destroyed
  return *lock;
}

absl::Status HoldLivenessLock(const SegmentInfo& self) {
  LivenessLock& own = OwnLivenessLock();
  std::lock_guard<std::mutex> lock(own.mutex);
  if (own.holder == self.pid) return absl::OkStatus();
  std::string name = LivenessLockName(geteuid(), self);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kSegmentMode);
  if (fd < 0) return ErrnoError(errno, "shm_open of the liveness lock");
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    return ErrnoError(err, "flock of the liveness lock");
  }
  // fd stays open: the lock lasts as long as the process. One that exits
  // removes the name; one killed leaves it to ReclaimStale.
  if (own.holder == 0) {
    // A static object's destructor, not atexit: it is registered with this
    // library's handle, so it runs when the library is unloaded (Open MPI
    // dlcloses its mtl) or at exit, whichever comes first; an atexit
    // callback would be called at exit inside an unloaded library.
    struct RemoveAtExit {
      ~RemoveAtExit() {
        LivenessLock& at_exit = OwnLivenessLock();
        if (at_exit.holder == getpid()) shm_unlink(at_exit.name.c_str());
      }
    };
    static RemoveAtExit remove_at_exit;
  }
  own.holder = self.pid;
  own.name = std::move(name);
  return absl::OkStatus();
}

// How long a creator may take between creating a segment's file and
// publishing its header; a file left unfinished longer was abandoned.
constexpr time_t kUnfinishedGraceSeconds = 10;

}  // namespace

absl::StatusOr<SegmentInfo> ReadSegmentHeader(int fd, uint64_t size) {
  alignas(SegmentHeader) char header[kSegmentPayloadOffset];
  if (pread(fd, header, sizeof(header), 0) != sizeof(header)) {
    return FiError(FI_EINVAL, "shorter than its header");
  }
  return CheckSegmentHeader(header, size);
}

namespace {

uint64_t PidNamespaceOrZero() {
  absl::StatusOr<uint64_t> pid_ns = OwnPidNamespace();
  return pid_ns.ok() ? *pid_ns : 0;
}

}  // namespace

std::string SegmentName(absl::string_view prefix, uint64_t n) {
  return absl::StrCat(prefix, "-", geteuid(), "-", PidNamespaceOrZero(), "-",
                      getpid(), "-", n);
}

std::optional<pid_t> PidFromSegmentName(absl::string_view prefix,
                                        absl::string_view name) {
  if (!absl::ConsumePrefix(&name, prefix) || !absl::ConsumePrefix(&name, "-")) {
    return std::nullopt;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
  uint64_t uid, pid_ns, pid, n;
  if (parts.size() != 4 || !absl::SimpleAtoi(parts[0], &uid) ||
      !absl::SimpleAtoi(parts[1], &pid_ns) ||
      !absl::SimpleAtoi(parts[2], &pid) || !absl::SimpleAtoi(parts[3], &n) ||
      pid == 0 ||
      pid > static_cast<uint64_t>(std::numeric_limits<pid_t>::max()) ||
      pid_ns != PidNamespaceOrZero()) {
    return std::nullopt;
  }
  return static_cast<pid_t>(pid);
}

absl::Status SpaceCheck(uint64_t size) {
  absl::StatusOr<uint64_t> free_bytes = ShmFreeBytes();
  if (!free_bytes.ok()) return free_bytes.status();
  if (size > *free_bytes) return NoSpace(size, absl::StrCat(*free_bytes));
  return absl::OkStatus();
}

absl::StatusOr<Segment> Segment::Create(const std::string& name, size_t size) {
  if (size < kSegmentPayloadOffset ||
      size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    return Fail(name, FiError(FI_EINVAL, absl::StrCat("bad size ", size)));
  }
  // Refuses early what cannot fit, before a file exists.
  absl::Status space = SpaceCheck(size);
  if (!space.ok()) return Fail(name, space);
  absl::StatusOr<uint64_t> start_time = ProcessStartTime(getpid());
  if (!start_time.ok()) return Fail(name, start_time.status());
  absl::StatusOr<uint64_t> pid_ns = OwnPidNamespace();
  if (!pid_ns.ok()) return Fail(name, pid_ns.status());

  // Held from before the file exists until the process ends: what
  // IsSegmentInUse tests, whatever pid namespace the tester is in.
  SegmentInfo info{getpid(), *start_time, *pid_ns, size};
  absl::Status live = HoldLivenessLock(info);
  if (!live.ok()) return Fail(name, live);
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                    kSegmentMode);
  if (fd < 0) return Fail(name, ErrnoError(errno, "shm_open"));
  absl::StatusOr<void*> base = SizeAndMap(fd, size);
  close(fd);  // the mapping stays: no fd per segment
  if (!base.ok()) {
    shm_unlink(name.c_str());
    return Fail(name, base.status());
  }
  WriteSegmentHeader(*base, info);
  return Segment(name, *base, size, info, /*is_creator=*/true);
}

absl::StatusOr<Segment> Segment::Open(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) return Fail(name, ErrnoError(errno, "shm_open"));
  absl::StatusOr<size_t> file_size = CheckFile(fd);
  if (!file_size.ok()) {
    close(fd);
    return Fail(name, file_size.status());
  }
  void* base =
      mmap(nullptr, *file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int mmap_errno = errno;
  close(fd);
  if (base == MAP_FAILED) return Fail(name, ErrnoError(mmap_errno, "mmap"));
  absl::StatusOr<SegmentInfo> creator = CheckSegmentHeader(base, *file_size);
  if (!creator.ok()) {
    munmap(base, *file_size);
    return Fail(name, creator.status());
  }
  return Segment(name, base, *file_size, *creator, /*is_creator=*/false);
}

Segment::Segment(std::string name, void* base, size_t mapped_size,
                 SegmentInfo info, bool is_creator)
    : name_(std::move(name)),
      base_(base),
      mapped_size_(mapped_size),
      info_(info),
      is_creator_(is_creator) {}

Segment::Segment(Segment&& other) noexcept
    : name_(std::move(other.name_)),
      base_(std::exchange(other.base_, nullptr)),
      mapped_size_(std::exchange(other.mapped_size_, 0)),
      info_(other.info_),
      is_creator_(std::exchange(other.is_creator_, false)) {}

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this != &other) {
    Release();
    name_ = std::move(other.name_);
    base_ = std::exchange(other.base_, nullptr);
    mapped_size_ = std::exchange(other.mapped_size_, 0);
    info_ = other.info_;
    is_creator_ = std::exchange(other.is_creator_, false);
  }
  return *this;
}

Segment::~Segment() { Release(); }

void Segment::Release() {
  if (base_ != nullptr) munmap(base_, mapped_size_);
  base_ = nullptr;
  // A forked child holds a copy of its parent's object; the name is the
  // parent's to remove.
  if (is_creator_ && getpid() == info_.pid) shm_unlink(name_.c_str());
  is_creator_ = false;
}

bool IsSegmentInUse(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return false;
  }
  absl::StatusOr<SegmentInfo> creator =
      ReadSegmentHeader(fd, static_cast<uint64_t>(st.st_size));
  close(fd);
  return IsSegmentInUse(st, creator);
}

bool IsSegmentInUse(const struct stat& file,
                    const absl::StatusOr<SegmentInfo>& header) {
  if (!header.ok()) {
    // Not published yet: its creator is filling it, unless that began
    // longer ago than any creator takes.
    return time(nullptr) - file.st_ctime < kUnfinishedGraceSeconds;
  }
  return IsFlocked(LivenessLockName(file.st_uid, *header));
}

bool IsFlocked(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // drops the shared lock when it was free
  return held;
}

}  // namespace shm
}  // namespace fabric

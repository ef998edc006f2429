#include "fabric/providers/util/shared_av.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

constexpr size_t kMaxMapSize =
    sizeof(SharedAvHeader) + kSharedAvMaxCount * sizeof(SharedAvSlot);

// FI_E* codes of system errors are the errno values.
absl::Status SystemError(absl::string_view call, const std::string& path) {
  int error = errno;
  return FiError(error, absl::StrCat("shared AV ", path, ": ", call, ": ",
                                     strerror(error)));
}

absl::StatusOr<std::string> ShmPath(absl::string_view name) {
  if (name.empty() || name.size() > kSharedAvMaxNameLength ||
      name.find('/') != absl::string_view::npos || name == "." ||
      name == "..") {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_av_open: name must be 1 to ",
                                kSharedAvMaxNameLength,
                                " characters without '/', not '", name, "'"));
  }
  return absl::StrCat("/", name);
}

// The address in a published slot; nullopt when the slot is malformed.
std::optional<IpAddress> ReadSlot(const SharedAvSlot& slot,
                                  uint32_t addr_format) {
  uint32_t length = slot.length;  // read once
  alignas(sockaddr_in6) unsigned char bytes[sizeof(slot.address)];
  memcpy(bytes, slot.address, sizeof(bytes));
  if (length > sizeof(bytes)) return std::nullopt;
  // FI_ADDR_STR domains keep sockaddrs of either family.
  if (addr_format == FI_ADDR_STR) addr_format = FI_SOCKADDR;
  absl::StatusOr<IpAddress> address = IpFromUser(addr_format, bytes, length);
  if (!address.ok() || address->length() != length) return std::nullopt;
  return *address;
}

// Closes the descriptor when it goes out of scope; the mapping stays.
struct ScopedFd {
  int fd;
  ~ScopedFd() {
    if (fd >= 0) close(fd);
  }
};

// Opens of a name that another process publishes or removes meanwhile
// start over, at most this often.
constexpr int kMaxOpenTurns = 16;

// Names for tables being built (with the pid: unique across processes).
std::atomic<uint64_t> private_names{0};

// Where glibc's shm_open keeps the object `path` ("/<name>").
std::string DevShm(const std::string& path) {
  return absl::StrCat("/dev/shm", path);
}

// An open-file-description lock of `type` (F_RDLCK, F_WRLCK) on the whole
// object at `fd`, replacing the one held through it; `wait` blocks.
bool Lock(int fd, short type, bool wait) {
  struct flock lock = {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) == 0;
}

// Whether the name `path` still stands for the object open at `fd`.
bool NameIsObject(const std::string& path, int fd) {
  struct stat named;
  struct stat held;
  return stat(DevShm(path).c_str(), &named) == 0 && fstat(fd, &held) == 0 &&
         named.st_ino == held.st_ino && named.st_dev == held.st_dev;
}

// Removes the name when it still stands for `fd`'s object, whose write lock
// the caller holds.
void UnlinkIfNamed(const std::string& path, int fd) {
  if (NameIsObject(path, fd)) shm_unlink(path.c_str());
}

}  // namespace

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::OpenForWrite(
    absl::string_view name, uint32_t addr_format, size_t count) {
  absl::StatusOr<std::string> path = ShmPath(name);
  if (!path.ok()) return path.status();
  if (count == 0) count = kSharedAvDefaultCount;
  if (count > kSharedAvMaxCount) {
    return FiError(FI_EINVAL, absl::StrCat("fi_av_open: count ", count,
                                           " exceeds the shared AV limit ",
                                           kSharedAvMaxCount));
  }
  // Join the live table, or create one; each turn loses only to another
  // process that published or removed a table meanwhile.
  for (int turn = 0; turn < kMaxOpenTurns; ++turn) {
    bool start_over = false;
    absl::StatusOr<std::unique_ptr<SharedAvTable>> table =
        Attach(*path, addr_format, false, &start_over);
    if (start_over) continue;
    if (ToFiErrno(table.status()) != -FI_ENOENT) return table;
    table = Create(*path, addr_format, count);
    if (ToFiErrno(table.status()) != -EEXIST) return table;
  }
  return FiError(FI_EAGAIN, absl::StrCat("shared AV ", *path,
                                         ": the name keeps changing hands"));
}

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::OpenForRead(
    absl::string_view name, uint32_t addr_format) {
  absl::StatusOr<std::string> path = ShmPath(name);
  if (!path.ok()) return path.status();
  for (int turn = 0; turn < kMaxOpenTurns; ++turn) {
    bool start_over = false;
    absl::StatusOr<std::unique_ptr<SharedAvTable>> table =
        Attach(*path, addr_format, true, &start_over);
    if (!start_over) return table;
  }
  return FiError(FI_EAGAIN, absl::StrCat("shared AV ", *path,
                                         ": the name keeps changing hands"));
}

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::Create(
    const std::string& path, uint32_t addr_format, size_t count) {
  // Built under a private name, published by link(2) once it is whole and
  // locked: nobody ever sees a table half made or without a holder.
  std::string private_path =
      absl::StrCat(path, ".", getpid(), ".", ++private_names, ".new");
  ScopedFd fd{shm_open(private_path.c_str(), O_RDWR | O_CREAT | O_EXCL,
                       0600)};
  if (fd.fd < 0) return SystemError("shm_open", private_path);
  struct Unlink {
    const std::string& path;
    ~Unlink() { shm_unlink(path.c_str()); }
  } unlink_private{private_path};
  size_t size = sizeof(SharedAvHeader) + count * sizeof(SharedAvSlot);
  if (ftruncate(fd.fd, size) != 0) return SystemError("ftruncate", path);
  if (!Lock(fd.fd, F_RDLCK, false)) return SystemError("fcntl", path);
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, 0);
  if (map == MAP_FAILED) return SystemError("mmap", path);
  std::unique_ptr<SharedAvTable> table(new SharedAvTable);
  table->path_ = path;
  table->header_ = static_cast<SharedAvHeader*>(map);
  table->map_size_ = size;
  table->capacity_ = count;
  table->addr_format_ = addr_format;
  SharedAvHeader* header = table->header_;
  header->addr_format = addr_format;
  header->slot_size = sizeof(SharedAvSlot);
  header->capacity = count;
  header->next.store(0, std::memory_order_relaxed);
  header->magic.store(kSharedAvMagic, std::memory_order_release);
  if (link(DevShm(private_path).c_str(), DevShm(path).c_str()) != 0) {
    if (errno == EEXIST) {
      return FiError(EEXIST, absl::StrCat("shared AV ", path,
                                             " was published meanwhile"));
    }
    return SystemError("link", path);
  }
  table->fd_ = std::exchange(fd.fd, -1);
  return table;
}

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::Attach(
    const std::string& path, uint32_t addr_format, bool read_only,
    bool* start_over) {
  // Read-write even for readers: the lock that may remove a stale table
  // is a write lock. Readers still map the table read-only.
  ScopedFd fd{shm_open(path.c_str(), O_RDWR, 0)};
  if (fd.fd < 0) return SystemError("shm_open", path);
  struct stat st;
  if (fstat(fd.fd, &st) != 0) return SystemError("fstat", path);
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    return FiError(FI_EAGAIN, absl::StrCat("shared AV ", path,
                                           " is still being created"));
  }
  if (size < sizeof(SharedAvHeader) || size > kMaxMapSize) {
    return FiError(FI_EINVAL, absl::StrCat("shared AV ", path, " has size ",
                                           size, ": not a shared AV"));
  }
  int prot = read_only ? PROT_READ : PROT_READ | PROT_WRITE;
  void* map = mmap(nullptr, size, prot, MAP_SHARED, fd.fd, 0);
  if (map == MAP_FAILED) return SystemError("mmap", path);
  std::unique_ptr<SharedAvTable> table(new SharedAvTable);
  table->path_ = path;
  table->header_ = static_cast<SharedAvHeader*>(map);
  table->map_size_ = size;
  table->addr_format_ = addr_format;
  const SharedAvHeader& header = *table->header_;
  uint64_t magic = header.magic.load(std::memory_order_acquire);
  if (magic == 0) {
    return FiError(FI_EAGAIN, absl::StrCat("shared AV ", path,
                                           " is still being created"));
  }
  // Each field is read once: another process may change it at any time.
  uint32_t slot_size = header.slot_size;
  uint32_t format = header.addr_format;
  uint64_t capacity = header.capacity;
  if (magic != kSharedAvMagic || slot_size != sizeof(SharedAvSlot) ||
      capacity > kSharedAvMaxCount ||
      sizeof(SharedAvHeader) + capacity * sizeof(SharedAvSlot) > size) {
    return FiError(FI_EINVAL, absl::StrCat("shared AV ", path,
                                           " has a malformed header"));
  }
  // No process holds it: they all died without closing it.
  if (Lock(fd.fd, F_WRLCK, false)) {
    UnlinkIfNamed(path, fd.fd);
    return FiError(FI_ENOENT, absl::StrCat("shared AV ", path,
                                           " was left by processes that "
                                           "are gone: starting afresh"));
  }
  // Waits while another process removes it or closes it last.
  if (!Lock(fd.fd, F_RDLCK, true)) return SystemError("fcntl", path);
  if (!NameIsObject(path, fd.fd)) {
    *start_over = true;
    return FiError(FI_EAGAIN,
                   absl::StrCat("shared AV ", path, " was removed meanwhile"));
  }
  if (format != addr_format) {
    return FiError(FI_EINVAL,
                   absl::StrCat("shared AV ", path, " holds address format ",
                                format, ", the domain uses ", addr_format));
  }
  table->capacity_ = capacity;
  table->fd_ = std::exchange(fd.fd, -1);
  return table;
}

SharedAvTable::~SharedAvTable() {
  if (header_ != nullptr) munmap(header_, map_size_);
  if (fd_ < 0) return;
  // The last holder can turn its read lock into the write lock.
  if (Lock(fd_, F_WRLCK, false)) UnlinkIfNamed(path_, fd_);
  close(fd_);
}

absl::StatusOr<fi_addr_t> SharedAvTable::Insert(const IpAddress& address) {
  uint64_t index = header_->next.fetch_add(1, std::memory_order_relaxed);
  if (index >= capacity_) {
    return FiError(FI_ENOSPC, absl::StrCat("shared AV ", path_, " is full (",
                                           capacity_, " addresses)"));
  }
  SharedAvSlot& slot = slots()[index];
  slot.length = address.length();
  memcpy(slot.address, address.sockaddr_ptr(), address.length());
  slot.state.store(kSlotValid, std::memory_order_release);
  return index;
}

void SharedAvTable::Remove(fi_addr_t fi_addr) {
  if (fi_addr >= capacity_) return;
  uint32_t expected = kSlotValid;
  slots()[fi_addr].state.compare_exchange_strong(expected, kSlotRemoved);
}

SharedAvSnapshot SharedAvTable::Snapshot() const {
  SharedAvSnapshot snapshot;
  uint64_t used =
      std::min(header_->next.load(std::memory_order_acquire), capacity_);
  snapshot.addresses.reserve(used);
  for (uint64_t i = 0; i < used; ++i) {
    const SharedAvSlot& slot = slots()[i];
    uint32_t state = slot.state.load(std::memory_order_acquire);
    std::optional<IpAddress> entry;
    if (state == kSlotValid) {
      entry = ReadSlot(slot, addr_format_);
      if (!entry.has_value()) ++snapshot.malformed;
    } else if (state != kSlotEmpty && state != kSlotRemoved) {
      ++snapshot.malformed;
    }
    snapshot.addresses.push_back(entry);
  }
  return snapshot;
}

}  // namespace fabric

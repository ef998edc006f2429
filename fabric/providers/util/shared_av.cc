#include "fabric/providers/util/shared_av.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

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
  ScopedFd fd{shm_open(path->c_str(), O_RDWR | O_CREAT | O_EXCL, 0600)};
  if (fd.fd < 0 && errno == EEXIST) return Attach(*path, addr_format, false);
  if (fd.fd < 0) return SystemError("shm_open", *path);
  std::unique_ptr<SharedAvTable> table(new SharedAvTable);
  table->path_ = *path;
  table->creator_ = true;  // from here on the destructor unlinks
  size_t size = sizeof(SharedAvHeader) + count * sizeof(SharedAvSlot);
  if (ftruncate(fd.fd, size) != 0) return SystemError("ftruncate", *path);
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.fd, 0);
  if (map == MAP_FAILED) return SystemError("mmap", *path);
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
  return table;
}

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::OpenForRead(
    absl::string_view name, uint32_t addr_format) {
  absl::StatusOr<std::string> path = ShmPath(name);
  if (!path.ok()) return path.status();
  return Attach(*path, addr_format, true);
}

absl::StatusOr<std::unique_ptr<SharedAvTable>> SharedAvTable::Attach(
    const std::string& path, uint32_t addr_format, bool read_only) {
  ScopedFd fd{shm_open(path.c_str(), read_only ? O_RDONLY : O_RDWR, 0)};
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
  if (format != addr_format) {
    return FiError(FI_EINVAL,
                   absl::StrCat("shared AV ", path, " holds address format ",
                                format, ", the domain uses ", addr_format));
  }
  table->capacity_ = capacity;
  return table;
}

SharedAvTable::~SharedAvTable() {
  if (header_ != nullptr) munmap(header_, map_size_);
  if (creator_) shm_unlink(path_.c_str());
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

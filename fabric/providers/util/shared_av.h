// File: fabric/providers/util/shared_av.h
//
// The table behind a named AV (fi_av_attr::name): a POSIX shared memory
// object "/<name>" that every process opening the name maps. fi_addr_t values
// are slot indices, so they are the same in every process.
//
//   SharedAvHeader  magic, addr_format, slot_size, capacity, next
//   SharedAvSlot    [capacity]: state, length, sockaddr bytes
//
// A writer takes a slot with an atomic fetch-add on `next`, fills it, then
// publishes it by storing kSlotValid (release); removal stores kSlotRemoved.
// Slots are never reused, so a published slot keeps its address. The
// creator publishes the header last (magic); every other opener checks it
// against the object's size and its own domain's address format, and every
// slot read is checked (state, length, family); malformed slots read as
// empty. Readers (FI_READ) map the object read-only. The object has mode
// 0600; another process of that user shrinking it under a mapping would
// still fault, as with any shared mapping.
//
// Lifetime: every process that has the table open holds an open-file-
// description read lock on it (F_OFD_SETLK), which the kernel drops when
// the process dies, however it dies. A table is published under its name
// only once initialised and locked by its creator (built under a private
// name, then link(2)ed into place), so a table nobody holds a lock on was
// left by processes that are all gone: the next writer to open the name
// removes it and starts afresh (a reader is told FI_ENOENT). The last
// close (the one that can turn its read lock into a write lock) removes
// the name. Both check, holding the write lock, that the name still
// stands for the object they hold before unlinking it.
#ifndef FABRIC_PROVIDERS_UTIL_SHARED_AV_H_
#define FABRIC_PROVIDERS_UTIL_SHARED_AV_H_

#include <netinet/in.h>
#include <rdma/fabric.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fabric/api/core/address.h"

namespace fabric {

constexpr uint64_t kSharedAvMagic = 0x3156417363626166;  // "fabcsAV1"
constexpr size_t kSharedAvDefaultCount = 1024;  // when fi_av_attr::count is 0
constexpr size_t kSharedAvMaxCount = 1 << 20;
constexpr size_t kSharedAvMaxNameLength = 200;  // shm_open allows < NAME_MAX

enum SharedAvSlotState : uint32_t {
  kSlotEmpty = 0,  // not (yet) published
  kSlotValid = 1,
  kSlotRemoved = 2,
};

struct SharedAvHeader {
  std::atomic<uint64_t> magic;  // kSharedAvMagic once the rest is filled
  uint32_t addr_format;         // of the creator's domain
  uint32_t slot_size;           // sizeof(SharedAvSlot)
  uint64_t capacity;            // slots after the header
  std::atomic<uint64_t> next;   // slots handed out; may pass capacity
};

struct SharedAvSlot {
  std::atomic<uint32_t> state;  // SharedAvSlotState
  uint32_t length;              // bytes of `address` in use
  unsigned char address[sizeof(sockaddr_in6)];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "shared memory needs address-free atomics");

// What a table holds, by fi_addr_t (nullopt: empty, removed or malformed).
struct SharedAvSnapshot {
  std::vector<std::optional<IpAddress>> addresses;
  size_t malformed = 0;  // slots that failed validation
};

class SharedAvTable {
 public:
  // Creates the table of `name` with `count` slots, or when it already
  // exists opens it for writing as OpenForRead would for reading.
  // FI_EINVAL status for a bad name or count.
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> OpenForWrite(
      absl::string_view name, uint32_t addr_format, size_t count);
  // Maps an existing table read-only: FI_ENOENT when there is none (or only
  // one its processes left behind), FI_EAGAIN for an empty object (a
  // creator of an older version still initialising it), FI_EINVAL when
  // malformed.
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> OpenForRead(
      absl::string_view name, uint32_t addr_format);
  // Unmaps; the last process to close it also unlinks the name, so later
  // opens start a new table (mappings that exist stay valid).
  ~SharedAvTable();

  // Publishes `address` in a fresh slot; FI_ENOSPC status when full.
  absl::StatusOr<fi_addr_t> Insert(const IpAddress& address);
  // Marks a published slot removed.
  void Remove(fi_addr_t fi_addr);
  SharedAvSnapshot Snapshot() const;

  void* base() const { return header_; }

 private:
  SharedAvTable() = default;
  // The table at `path` locked and mapped; FI_ENOENT when there is none or
  // it was left behind (then removed). *start_over when the name changed
  // hands while it looked.
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> Attach(
      const std::string& path, uint32_t addr_format, bool read_only,
      bool* start_over);
  // Creates, initialises, locks and publishes a new table at `path`;
  // EEXIST when another process published one first.
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> Create(
      const std::string& path, uint32_t addr_format, size_t count);
  SharedAvSlot* slots() const {
    return reinterpret_cast<SharedAvSlot*>(header_ + 1);
  }

  std::string path_;  // "/<name>"
  int fd_ = -1;       // holds the read lock while the table is open
  SharedAvHeader* header_ = nullptr;
  size_t map_size_ = 0;
  uint64_t capacity_ = 0;  // validated copy of header_->capacity
  uint32_t addr_format_ = 0;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_SHARED_AV_H_

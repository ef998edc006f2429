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
  // Maps an existing table read-only: FI_ENOENT when there is none, FI_EAGAIN
  // while its creator is still initialising it, FI_EINVAL when malformed.
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> OpenForRead(
      absl::string_view name, uint32_t addr_format);
  // Unmaps; the process that created the object also unlinks it, so later
  // opens of the name fail (mappings that exist stay valid).
  ~SharedAvTable();

  // Publishes `address` in a fresh slot; FI_ENOSPC status when full.
  absl::StatusOr<fi_addr_t> Insert(const IpAddress& address);
  // Marks a published slot removed.
  void Remove(fi_addr_t fi_addr);
  SharedAvSnapshot Snapshot() const;

  void* base() const { return header_; }

 private:
  SharedAvTable() = default;
  static absl::StatusOr<std::unique_ptr<SharedAvTable>> Attach(
      const std::string& path, uint32_t addr_format, bool read_only);
  SharedAvSlot* slots() const {
    return reinterpret_cast<SharedAvSlot*>(header_ + 1);
  }

  std::string path_;  // "/<name>"
  SharedAvHeader* header_ = nullptr;
  size_t map_size_ = 0;
  uint64_t capacity_ = 0;  // validated copy of header_->capacity
  uint32_t addr_format_ = 0;
  bool creator_ = false;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_SHARED_AV_H_

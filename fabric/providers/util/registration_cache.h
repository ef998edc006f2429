// File: fabric/providers/util/registration_cache.h
//
// A cache of memory registrations for a domain whose registrations cost a
// system or device call (verbs: ibv_reg_mr pins pages). fi_mr_reg of a
// range a live registration covers, with access it grants, takes that one
// again; fi_close of the region keeps it for the next, up to
// FI_MR_CACHE_MAX_COUNT unused registrations and FI_MR_CACHE_MAX_SIZE
// unused bytes (least recently used go first).
//
// Nothing stale is ever handed out: each cached range is subscribed with
// the process's memory monitor (memory_monitor.h) before it is registered,
// and when the monitor reports that the range was unmapped or freed, the
// registration leaves the cache (released at once if unused, else when its
// last region closes); one reported while it was being registered is never
// cached. Every lookup and release first syncs the monitor, so an unmap
// that returned before the fi_mr_reg is seen. With no monitor
// (FI_MR_CACHE_MONITOR=disabled, none available, or in a forked child) or
// FI_MR_CACHE_MAX_COUNT=0, nothing is kept: every region gets its own
// registration, released when it closes.
//
// Lookups walk the live registrations (at most max_count unused ones
// plus those in use); thread-safe.
#ifndef FABRIC_PROVIDERS_UTIL_REGISTRATION_CACHE_H_
#define FABRIC_PROVIDERS_UTIL_REGISTRATION_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "fabric/providers/util/memory_monitor.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {

class RegistrationCache : public MemoryWatcher {
 public:
  // One registration: the provider's handle for [addr, addr + len).
  struct Entry {
    uintptr_t addr = 0;
    size_t len = 0;
    uint64_t access = 0;
    void* handle = nullptr;
    int users = 0;
    bool cached = false;  // in the cache (subscribed, findable)
    std::list<Entry*>::iterator unused;  // its place when users == 0
  };

  using Register = std::function<absl::StatusOr<void*>(
      uintptr_t addr, size_t len, uint64_t access)>;
  using Deregister = std::function<void(void* handle)>;

  // `max_count` and `max_size` bound the unused registrations kept.
  RegistrationCache(size_t max_count, size_t max_size, Register reg,
                    Deregister dereg);
  // Every entry must have been released.
  ~RegistrationCache() override;

  // A registration covering [addr, addr + len) with `access`: a cached one
  // or a new one (only a new one, never kept, unless `cacheable`). Release
  // it when its region closes.
  absl::StatusOr<Entry*> Acquire(const void* addr, size_t len,
                                 uint64_t access, bool cacheable = true);
  void Release(Entry* entry);

  // MemoryWatcher: [addr, addr + len) was unmapped or freed.
  void Invalidate(uintptr_t addr, size_t len) override;

  // What happened so far, for tests and logs.
  struct Stats {
    size_t hits = 0;
    size_t registrations = 0;    // Register calls
    size_t deregistrations = 0;  // Deregister calls
    size_t invalidated = 0;      // entries dropped by the monitor
  };
  Stats stats();
  bool enabled() const { return enabled_; }

 private:
  // Drops `entry` from the cache (unsubscribing it); deregisters it when
  // unused.
  void DropLocked(Entry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const size_t max_count_;
  const size_t max_size_;
  const Register register_;
  const Deregister deregister_;
  bool enabled_ = false;
  Mutex mutex_;
  // Cached ones.
  std::list<std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mutex_);
  // Cached, users == 0; LRU last.
  std::list<Entry*> unused_ ABSL_GUARDED_BY(mutex_);
  // Ranges being subscribed and registered (not yet in entries_), and
  // whether an invalidation reached them meanwhile.
  struct Pending {
    uintptr_t addr;
    size_t len;
    bool invalidated;
  };
  std::list<Pending> pending_ ABSL_GUARDED_BY(mutex_);
  size_t unused_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_REGISTRATION_CACHE_H_

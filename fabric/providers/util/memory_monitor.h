// File: fabric/providers/util/memory_monitor.h
//
// Who tells the registration caches (registration_cache.h) that memory
// they hold registrations for no longer maps what it did: the process's
// one memory monitor.
//
// - Imported: an application's struct fid_mem_monitor (rdma/fi_ext.h),
//   handed over with fi_open("mr_cache") and fi_import_fid, as Open MPI
//   does. Its export_ops start, subscribe, unsubscribe and valid are
//   called; it calls import_ops->notify(monitor, addr, len), which we set,
//   when [addr, addr+len) is unmapped or freed. The last one imported
//   replaces the previous; its stop is called when it is replaced or
//   when the application closes its fid (fi_close(&monitor->fid)).
// - Built in (FI_MR_CACHE_MONITOR "userfaultfd", the default): a
//   userfaultfd(2) whose subscribed ranges report munmap, madvise
//   (DONTNEED/REMOVE) and mremap of them. The kernel holds the unmapping
//   thread until the event is read, and events are read and handled under
//   the monitor's lock, which MonitorHub::Sync also takes: so a cache that
//   syncs before a lookup has seen every unmap that returned. A page fault
//   in a subscribed range (a page freed by madvise and touched again) is
//   answered with a zero page, as the kernel would without the monitor.
// - None (FI_MR_CACHE_MONITOR "disabled", or userfaultfd unavailable: the
//   log says why): caches keep nothing, every registration is made and
//   released as if uncached.
#ifndef FABRIC_PROVIDERS_UTIL_MEMORY_MONITOR_H_
#define FABRIC_PROVIDERS_UTIL_MEMORY_MONITOR_H_

#include <rdma/fabric.h>
#include <rdma/fi_ext.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"

namespace fabric {

// What hears of invalidated memory: a registration cache.
class MemoryWatcher {
 public:
  virtual ~MemoryWatcher() = default;
  // [addr, addr + len) no longer maps what it did. Called with the hub's
  // lock held: the watcher must not call back into the hub.
  virtual void Invalidate(uintptr_t addr, size_t len) = 0;
};

// A source of invalidations.
class MemoryMonitor {
 public:
  virtual ~MemoryMonitor() = default;
  // Report changes to [addr, addr + len) from now on; an error when this
  // range cannot be watched (it must then not be cached).
  virtual absl::Status Subscribe(uintptr_t addr, size_t len) = 0;
  virtual void Unsubscribe(uintptr_t addr, size_t len) = 0;
  // Whether a cached range still maps what it did (imported monitors may
  // say no; the built-in one reports every change as it happens).
  virtual bool Valid(uintptr_t addr, size_t len) = 0;
  // Handles the events already queued (under the hub's lock).
  virtual void Drain() {}
  virtual const char* name() const = 0;
};

// The process's monitor and the watchers it serves.
class MonitorHub {
 public:
  static MonitorHub& Get();

  // Starts serving `watcher`; false when there is no monitor (then it
  // must cache nothing).
  bool AddWatcher(MemoryWatcher* watcher);
  void RemoveWatcher(MemoryWatcher* watcher);

  // Subscribe/Unsubscribe of the current monitor, under the hub's lock;
  // Subscribe fails when there is none.
  absl::Status Subscribe(uintptr_t addr, size_t len);
  void Unsubscribe(uintptr_t addr, size_t len);
  // Handles every queued event, so that invalidations of memory unmapped
  // before this call have reached the watchers.
  void Sync();
  // Sync, then, in the same hold of the lock, invalidates [addr, addr +
  // len) in every watcher when the monitor says it no longer maps what it
  // did (an imported monitor's valid()): what a cache does before a lookup.
  void SyncRange(uintptr_t addr, size_t len);

  // Invalidates [addr, addr + len) in every watcher: what monitors call.
  // `locked`: the caller holds the hub's lock already.
  void Notify(uintptr_t addr, size_t len, bool locked);

  // Makes `monitor` (an application's, through fi_import_fid) the current
  // one; every watcher's cache is emptied first, since the previous
  // monitor's subscriptions end. Import sets monitor->fid.ops: fi_close of
  // the monitor's fid (as Open MPI does at MPI_Finalize) calls Unimport,
  // which empties the caches again, stops it, and lets the built-in
  // monitor take over at the next use.
  int Import(fid_mem_monitor* monitor);
  int Unimport(fid_mem_monitor* monitor);

  // The current monitor's name ("userfaultfd", "imported", "none").
  const char* MonitorName();

 private:
  MonitorHub() = default;
  void EnsureMonitorLocked();

  std::recursive_mutex mutex_;
  bool chosen_ = false;
  std::unique_ptr<MemoryMonitor> monitor_;
  fid_mem_monitor* imported_ = nullptr;  // when monitor_ is imported
  std::vector<MemoryWatcher*> watchers_;
};

// fi_open("mr_cache"): a fid whose fi_import_fid takes an application's
// fid_mem_monitor (fclass FI_CLASS_MEM_MONITOR, export_ops with all five
// calls): 0, or -FI_EINVAL for anything else. Closing it keeps the
// imported monitor in place.
int OpenMrCacheFid(fid** out, void* context);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_MEMORY_MONITOR_H_

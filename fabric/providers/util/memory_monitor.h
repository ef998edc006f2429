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
//   thread until the event is read, and events are read and queued under
//   the monitor's own lock, which MonitorHub::Sync also takes: so a cache
//   that syncs before a lookup has seen every unmap that returned. A page
//   fault in a subscribed range (a page freed by madvise and touched
//   again) is answered with a zero page, as the kernel would without the
//   monitor; a range whose faults cannot be answered so (hugetlbfs) is not
//   subscribed.
//   The userfaultfd must see faults from kernel mode too (a registration
//   pins pages from the kernel): an unprivileged process gets one only
//   where vm.unprivileged_userfaultfd is 1.
// - None (FI_MR_CACHE_MONITOR "disabled", or userfaultfd unavailable: the
//   log says why): caches keep nothing, every registration is made and
//   released as if uncached.
//
// Notifications are queued, not handled where they arrive: a monitor may
// notify from inside the application's free() or munmap() (Open MPI's
// memory hooks do), or the kernel may hold a thread in munmap() until the
// event is read, while that thread holds a cache's lock. So a notify takes
// only the queue's lock, which is never held around anything else, and
// the queue reaches the caches (MemoryWatcher::Invalidate) when a cache
// syncs: before every lookup and release. A queue that overflows empties
// every cache instead (nothing stale is ever handed out).
//
// A forked child does not share its parent's monitor (the userfaultfd and
// its thread are the parent's; reading it would take the parent's events):
// in the child the hub has no monitor, and caches neither hand out nor
// keep registrations.
#ifndef FABRIC_PROVIDERS_UTIL_MEMORY_MONITOR_H_
#define FABRIC_PROVIDERS_UTIL_MEMORY_MONITOR_H_

#include <rdma/fabric.h>
#include <rdma/fi_ext.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {

// What hears of invalidated memory: a registration cache.
class MemoryWatcher {
 public:
  virtual ~MemoryWatcher() = default;
  // [addr, addr + len) no longer maps what it did. Called with the hub's
  // lock held (it is recursive: the watcher may unsubscribe).
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
  // Reads the events already queued and notifies the hub of them.
  virtual void Drain() {}
  // In a forked child: lets go of what belongs to the parent (its fds'
  // copies are closed; its thread does not exist here) without stopping
  // it. The object is then leaked, never destroyed.
  virtual void LeaveInForkedChild() {}
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
  // Handles every queued event and notification, so that invalidations of
  // memory unmapped before this call have reached the watchers.
  void Sync();
  // Sync, then, in the same hold of the lock, invalidates [addr, addr +
  // len) in every watcher when the monitor says it no longer maps what it
  // did (an imported monitor's valid()): what a cache does before a lookup.
  void SyncRange(uintptr_t addr, size_t len);

  // Queues the invalidation of [addr, addr + len) for every watcher (the
  // next Sync delivers it): what monitors call, from any thread and
  // context; takes no lock but the queue's.
  void Notify(uintptr_t addr, size_t len);
  // Whether this process is a fork of the one that started the monitor.
  bool InForkedChild() const {
    return forked_child_.load(std::memory_order_relaxed);
  }

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
  // Notifications not yet delivered: a fixed ring (a notify must not
  // allocate), and whether one was lost to a full ring.
  struct Range {
    uintptr_t addr;
    size_t len;
  };
  static constexpr size_t kQueuedRanges = 256;

  MonitorHub();
  void EnsureMonitorLocked();
  // Delivers the queued notifications to the watchers; mutex_ is held.
  void DeliverQueuedLocked();
  // Invalidates [addr, addr + len) in every watcher; mutex_ is held.
  void InvalidateAllLocked(uintptr_t addr, size_t len);

  std::recursive_mutex mutex_;
  Mutex queue_mutex_;  // held around nothing else
  Range queued_[kQueuedRanges] ABSL_GUARDED_BY(queue_mutex_);
  size_t queued_count_ ABSL_GUARDED_BY(queue_mutex_) = 0;
  bool queue_overflowed_ ABSL_GUARDED_BY(queue_mutex_) = false;
  std::atomic<bool> forked_child_{false};  // set by the atfork handler
  bool left_parent_monitor_ = false;       // the child let it go
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

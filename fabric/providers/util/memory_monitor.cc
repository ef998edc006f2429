#include "fabric/providers/util/memory_monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/api/config/mr_cache_settings.h"

namespace fabric {
namespace {

const fi_provider* Log() { return nullptr; }  // the core's log

uintptr_t PageDown(uintptr_t addr) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return addr & ~(page - 1);
}
uintptr_t PageUp(uintptr_t addr) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return (addr + page - 1) & ~(page - 1);
}

// The built-in monitor: a userfaultfd and a thread that reads its events.
class UserfaultfdMonitor : public MemoryMonitor {
 public:
  // The monitor, or why there is none.
  static absl::StatusOr<std::unique_ptr<UserfaultfdMonitor>> Open(
      MonitorHub* hub) {
    // Faults from kernel mode too: a registration pins pages from the
    // kernel (ibv_reg_mr), and a page given back in a watched range faults
    // there. A userfaultfd limited to user-mode faults (UFFD_USER_MODE_ONLY,
    // what an unprivileged process gets where vm.unprivileged_userfaultfd
    // is 0) would fail that pinning with EFAULT, so it is not used.
    int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    if (fd < 0) {
      return FiError(FI_ENOSYS,
                     absl::StrCat("userfaultfd: ", strerror(errno),
                                  errno == EPERM
                                      ? " (kernel-mode faults need "
                                        "vm.unprivileged_userfaultfd=1 or "
                                        "CAP_SYS_PTRACE)"
                                      : ""));
    }
    uffdio_api api = {};
    api.api = UFFD_API;
    api.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
                   UFFD_FEATURE_EVENT_REMAP;
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
      int err = errno;
      close(fd);
      return FiError(FI_ENOSYS,
                     absl::StrCat("userfaultfd UFFDIO_API: ", strerror(err)));
    }
    int stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop < 0) {
      int err = errno;
      close(fd);
      return FiError(err, absl::StrCat("eventfd: ", strerror(err)));
    }
    std::unique_ptr<UserfaultfdMonitor> monitor(
        new UserfaultfdMonitor(hub, fd, stop));
    monitor->thread_ = std::thread([raw = monitor.get()] { raw->Run(); });
    return monitor;
  }

  ~UserfaultfdMonitor() override {
    uint64_t one = 1;
    if (write(stop_, &one, sizeof(one)) != sizeof(one)) {
      FI_WARN(Log(), FI_LOG_MR, "userfaultfd monitor: cannot stop\n");
    }
    if (thread_.joinable()) thread_.join();
    close(fd_);
    close(stop_);
  }

  absl::Status Subscribe(uintptr_t addr, size_t len) override {
    uffdio_register reg = {};
    reg.range.start = PageDown(addr);
    reg.range.len = PageUp(addr + len) - reg.range.start;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(fd_, UFFDIO_REGISTER, &reg) != 0) {
      return FiError(FI_EINVAL, absl::StrCat("UFFDIO_REGISTER: ",
                                             strerror(errno)));
    }
    if ((reg.ioctls & (uint64_t{1} << _UFFDIO_ZEROPAGE)) == 0) {
      // Faults there could not be answered (hugetlbfs): not watched. What
      // was cached on those pages is not watched either from now on.
      uffdio_range range = reg.range;
      (void)ioctl(fd_, UFFDIO_UNREGISTER, &range);
      hub_->Notify(range.start, range.len);
      return FiError(FI_EINVAL, "userfaultfd cannot answer faults in this "
                                "range (hugetlbfs?): not cached");
    }
    return absl::OkStatus();
  }

  // Nothing: userfaultfd registrations are per page, not per subscriber,
  // so unregistering one range would stop watching every other cached
  // registration on those pages (another cache's, or a neighbour sharing
  // a page). A range stays watched until it is unmapped; events for
  // ranges no cache holds find nothing to invalidate.
  void Unsubscribe(uintptr_t, size_t) override {}

  bool Valid(uintptr_t, size_t) override { return true; }

  void Drain() override {
    std::lock_guard<std::mutex> lock(drain_mutex_);
    uffd_msg messages[16];
    while (true) {
      ssize_t n = read(fd_, messages, sizeof(messages));
      if (n <= 0) return;  // EAGAIN: nothing queued
      for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(uffd_msg); ++i) {
        Handle(messages[i]);
      }
    }
  }

  void LeaveInForkedChild() override {
    close(fd_);
    close(stop_);
  }

  const char* name() const override { return "userfaultfd"; }

 private:
  UserfaultfdMonitor(MonitorHub* hub, int fd, int stop)
      : hub_(hub), fd_(fd), stop_(stop) {}

  void Handle(const uffd_msg& message) {
    switch (message.event) {
      case UFFD_EVENT_UNMAP:
      case UFFD_EVENT_REMOVE: {
        uintptr_t start = message.arg.remove.start;
        uintptr_t end = message.arg.remove.end;
        hub_->Notify(start, end - start);
        return;
      }
      case UFFD_EVENT_REMAP: {
        // The pages moved away from `from`: what was cached there is gone.
        uintptr_t from = message.arg.remap.from;
        hub_->Notify(from, message.arg.remap.len);
        return;
      }
      case UFFD_EVENT_PAGEFAULT: {
        // A page of a subscribed range, freed and touched again: what the
        // kernel would have given it.
        uffdio_zeropage zero = {};
        zero.range.start = PageDown(message.arg.pagefault.address);
        zero.range.len = PageUp(zero.range.start + 1) - zero.range.start;
        if (ioctl(fd_, UFFDIO_ZEROPAGE, &zero) != 0) {
          // Filled meanwhile (EEXIST), the mapping changing (EAGAIN),
          // unsubscribed (ENOENT): the faulting thread retries, and
          // faults here again if it must.
          uffdio_range wake = zero.range;
          (void)ioctl(fd_, UFFDIO_WAKE, &wake);
        }
        return;
      }
      default:
        return;
    }
  }

  void Run() {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_, POLLIN, 0}};
    while (true) {
      if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      if (fds[0].revents != 0) Drain();
    }
  }

  MonitorHub* const hub_;
  const int fd_;
  const int stop_;
  // Held while events are read and queued: a Sync that takes it has every
  // event read before it queued.
  std::mutex drain_mutex_;
  std::thread thread_;
};

// An application's fid_mem_monitor.
class ImportedMonitor : public MemoryMonitor {
 public:
  explicit ImportedMonitor(fid_mem_monitor* monitor) : monitor_(monitor) {}
  ~ImportedMonitor() override { monitor_->export_ops->stop(monitor_); }

  absl::Status Subscribe(uintptr_t addr, size_t len) override {
    int rc = monitor_->export_ops->subscribe(
        monitor_, reinterpret_cast<const void*>(addr), len);
    if (rc != 0) {
      return FiError(rc < 0 ? -rc : FI_EINVAL,
                     "the imported monitor refused a subscription");
    }
    return absl::OkStatus();
  }
  void Unsubscribe(uintptr_t addr, size_t len) override {
    monitor_->export_ops->unsubscribe(monitor_,
                                      reinterpret_cast<const void*>(addr), len);
  }
  bool Valid(uintptr_t addr, size_t len) override {
    return monitor_->export_ops->valid(monitor_,
                                       reinterpret_cast<const void*>(addr),
                                       len);
  }
  const char* name() const override { return "imported"; }

 private:
  fid_mem_monitor* const monitor_;
};

void NotifyFromApplication(fid_mem_monitor*, const void* addr, size_t len) {
  MonitorHub::Get().Notify(reinterpret_cast<uintptr_t>(addr), len);
}

fi_ops_mem_notify kNotifyOps = {
    .size = sizeof(fi_ops_mem_notify),
    .notify = NotifyFromApplication,
};

// fi_close of an imported monitor's fid (which import set): it is no
// longer used; the built-in monitor takes over. The memory stays the
// application's (Open MPI frees it after this close).
int CloseImportedMonitor(fid* object) {
  return MonitorHub::Get().Unimport(
      reinterpret_cast<fid_mem_monitor*>(object));
}

fi_ops kImportedMonitorFidOps = MakeFidOps({.close = CloseImportedMonitor});

// The fid fi_open("mr_cache") returns.
struct MrCacheFid {
  fid fid_;
};

int CloseMrCacheFid(fid* object) {
  delete reinterpret_cast<MrCacheFid*>(object);
  return 0;
}

int ImportMonitor(fid*, fid* exported, uint64_t flags) {
  // The class first: only a monitor may be read as one.
  bool is_monitor =
      exported != nullptr && exported->fclass == FI_CLASS_MEM_MONITOR;
  auto* monitor = reinterpret_cast<fid_mem_monitor*>(exported);
  const fi_ops_mem_monitor* ops = is_monitor ? monitor->export_ops : nullptr;
  if (flags != 0 || !is_monitor || ops == nullptr ||
      ops->size < sizeof(fi_ops_mem_monitor) || ops->start == nullptr ||
      ops->stop == nullptr || ops->subscribe == nullptr ||
      ops->unsubscribe == nullptr || ops->valid == nullptr) {
    FI_WARN(Log(), FI_LOG_MR,
            "fi_import_fid(mr_cache): not a struct fid_mem_monitor with "
            "start, stop, subscribe, unsubscribe and valid (flags 0)\n");
    return -FI_EINVAL;
  }
  return MonitorHub::Get().Import(monitor);
}

fi_ops kMrCacheFidOps = MakeFidOps({.close = CloseMrCacheFid,
                                    .bind = ImportMonitor});

}  // namespace

MonitorHub& MonitorHub::Get() {
  static MonitorHub* hub = new MonitorHub;  // lives as long as the process
  return *hub;
}

MonitorHub::MonitorHub() {
  pthread_atfork(nullptr, nullptr, [] {
    Get().forked_child_.store(true, std::memory_order_relaxed);
  });
}

void MonitorHub::EnsureMonitorLocked() {
  if (InForkedChild() && !left_parent_monitor_) {
    left_parent_monitor_ = true;
    chosen_ = true;  // and no monitor of its own: the child caches nothing
    if (imported_ == nullptr && monitor_ != nullptr) {
      monitor_->LeaveInForkedChild();
      (void)monitor_.release();  // its thread is the parent's
    }
    monitor_.reset();
    imported_ = nullptr;
    return;
  }
  if (chosen_) return;
  chosen_ = true;
  if (CurrentMrCacheSettings().monitor == "disabled") {
    FI_INFO(Log(), FI_LOG_MR, "registration cache disabled (%s)\n",
            "FI_MR_CACHE_MONITOR=disabled");
    return;
  }
  absl::StatusOr<std::unique_ptr<UserfaultfdMonitor>> uffd =
      UserfaultfdMonitor::Open(this);
  if (!uffd.ok()) {
    FI_INFO(Log(), FI_LOG_MR,
            "registration cache disabled: no memory monitor (%s)\n",
            std::string(uffd.status().message()).c_str());
    return;
  }
  monitor_ = *std::move(uffd);
}

bool MonitorHub::AddWatcher(MemoryWatcher* watcher) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  watchers_.push_back(watcher);
  return monitor_ != nullptr;
}

void MonitorHub::RemoveWatcher(MemoryWatcher* watcher) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), watcher),
                  watchers_.end());
}

absl::Status MonitorHub::Subscribe(uintptr_t addr, size_t len) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  if (monitor_ == nullptr) {
    return FiError(FI_ENOSYS, "no memory monitor");
  }
  return monitor_->Subscribe(addr, len);
}

void MonitorHub::Unsubscribe(uintptr_t addr, size_t len) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  if (monitor_ != nullptr) monitor_->Unsubscribe(addr, len);
}

void MonitorHub::Sync() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  if (monitor_ != nullptr) monitor_->Drain();
  DeliverQueuedLocked();
}

void MonitorHub::SyncRange(uintptr_t addr, size_t len) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  if (monitor_ == nullptr) return;
  monitor_->Drain();
  DeliverQueuedLocked();
  if (!monitor_->Valid(addr, len)) InvalidateAllLocked(addr, len);
}

void MonitorHub::Notify(uintptr_t addr, size_t len) {
  MutexLock<Mutex> lock(queue_mutex_);
  if (queued_count_ == kQueuedRanges) {
    queue_overflowed_ = true;
    return;
  }
  queued_[queued_count_++] = Range{addr, len};
}

void MonitorHub::DeliverQueuedLocked() {
  Range ranges[kQueuedRanges];
  size_t count;
  bool overflowed;
  {
    MutexLock<Mutex> lock(queue_mutex_);
    count = queued_count_;
    overflowed = queue_overflowed_;
    std::copy(queued_, queued_ + count, ranges);
    queued_count_ = 0;
    queue_overflowed_ = false;
  }
  if (overflowed) {
    FI_INFO(Log(), FI_LOG_MR, "memory monitor: more than %zu invalidations "
            "queued; every cache emptied\n", kQueuedRanges);
    InvalidateAllLocked(0, UINTPTR_MAX);
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    InvalidateAllLocked(ranges[i].addr, ranges[i].len);
  }
}

void MonitorHub::InvalidateAllLocked(uintptr_t addr, size_t len) {
  for (MemoryWatcher* watcher : watchers_) watcher->Invalidate(addr, len);
}

int MonitorHub::Import(fid_mem_monitor* monitor) {
  // The old monitor ends outside the lock: its thread may be waiting for it.
  std::unique_ptr<MemoryMonitor> old;
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  monitor->import_ops = &kNotifyOps;
  int rc = monitor->export_ops->start(monitor);
  if (rc != 0) {
    // The monitor in place stays.
    monitor->import_ops = nullptr;
    FI_WARN(Log(), FI_LOG_MR, "the imported memory monitor did not start: "
            "%d\n", rc);
    return rc < 0 ? rc : -FI_EINVAL;
  }
  monitor->fid.ops = &kImportedMonitorFidOps;
  chosen_ = true;
  // Every cached registration was subscribed with the old monitor.
  DeliverQueuedLocked();
  InvalidateAllLocked(0, UINTPTR_MAX);
  old = std::move(monitor_);
  monitor_ = std::make_unique<ImportedMonitor>(monitor);
  imported_ = monitor;
  FI_INFO(Log(), FI_LOG_MR, "registration caches use the imported memory "
          "monitor\n");
  return 0;
}

int MonitorHub::Unimport(fid_mem_monitor* monitor) {
  std::unique_ptr<MemoryMonitor> old;  // ends outside the lock
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (imported_ != monitor) return 0;  // replaced already
  DeliverQueuedLocked();
  InvalidateAllLocked(0, UINTPTR_MAX);
  old = std::move(monitor_);
  imported_ = nullptr;
  chosen_ = false;  // the next use picks the built-in monitor
  monitor->import_ops = nullptr;
  return 0;
}

const char* MonitorHub::MonitorName() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  EnsureMonitorLocked();
  return monitor_ != nullptr ? monitor_->name() : "none";
}

int OpenMrCacheFid(fid** out, void* context) {
  if (out == nullptr) return -FI_EINVAL;
  auto* cache = new MrCacheFid;
  cache->fid_ = {};
  InitFid(&cache->fid_, FI_CLASS_MR_CACHE, context, &kMrCacheFidOps);
  *out = &cache->fid_;
  return 0;
}

}  // namespace fabric

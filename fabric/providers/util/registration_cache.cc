#include "fabric/providers/util/registration_cache.h"

#include <utility>
#include <vector>

namespace fabric {
namespace {

bool Overlaps(uintptr_t start, size_t length, uintptr_t addr, size_t len) {
  uintptr_t end = len > UINTPTR_MAX - addr ? UINTPTR_MAX : addr + len;
  return start < end && addr < start + length;
}

}  // namespace

// Lock order: the hub's lock, then mutex_. So no call into the hub is made
// while mutex_ is held; what must be unsubscribed or deregistered is
// collected under mutex_ and handled after it is released.

RegistrationCache::RegistrationCache(size_t max_count, size_t max_size,
                                     Register reg, Deregister dereg)
    : max_count_(max_count),
      max_size_(max_size),
      register_(std::move(reg)),
      deregister_(std::move(dereg)) {
  enabled_ = max_count_ > 0 && MonitorHub::Get().AddWatcher(this);
}

RegistrationCache::~RegistrationCache() {
  MonitorHub::Get().RemoveWatcher(this);
  std::vector<std::unique_ptr<Entry>> left;
  {
    MutexLock<Mutex> lock(mutex_);
    for (auto& entry : entries_) left.push_back(std::move(entry));
    entries_.clear();
    unused_.clear();
  }
  for (auto& entry : left) {
    if (entry->cached) MonitorHub::Get().Unsubscribe(entry->addr, entry->len);
    deregister_(entry->handle);
  }
}

absl::StatusOr<RegistrationCache::Entry*> RegistrationCache::Acquire(
    const void* addr_ptr, size_t len, uint64_t access, bool cacheable) {
  uintptr_t addr = reinterpret_cast<uintptr_t>(addr_ptr);
  cacheable = cacheable && enabled_ && !MonitorHub::Get().InForkedChild();
  if (cacheable) {
    // Every unmap that returned before this call reaches Invalidate first;
    // a monitor that says the range changed (an imported one's valid())
    // invalidates what covers it.
    MonitorHub::Get().SyncRange(addr, len);
    MutexLock<Mutex> lock(mutex_);
    for (auto& owned : entries_) {
      Entry* entry = owned.get();
      if (!entry->cached || entry->addr > addr ||
          entry->addr + entry->len < addr + len ||
          (entry->access & access) != access) {
        continue;
      }
      if (entry->users++ == 0) {
        unused_.erase(entry->unused);
        unused_bytes_ -= entry->len;
      }
      ++stats_.hits;
      return entry;
    }
  }
  // Watched from before it is registered: an unmap in between reaches
  // Invalidate, which marks the pending range.
  std::list<Pending>::iterator pending;
  bool subscribed = false;
  if (cacheable) {
    {
      MutexLock<Mutex> lock(mutex_);
      pending = pending_.insert(pending_.end(), Pending{addr, len, false});
    }
    subscribed = MonitorHub::Get().Subscribe(addr, len).ok();
  }
  absl::StatusOr<void*> handle = register_(addr, len, access);
  bool cached = subscribed && handle.ok();
  if (cacheable) {
    MutexLock<Mutex> lock(mutex_);
    cached = cached && !pending->invalidated;
    pending_.erase(pending);
  }
  if (subscribed && !cached) MonitorHub::Get().Unsubscribe(addr, len);
  if (!handle.ok()) return handle.status();
  auto owned = std::make_unique<Entry>();
  Entry* entry = owned.get();
  entry->addr = addr;
  entry->len = len;
  entry->access = access;
  entry->handle = *handle;
  entry->users = 1;
  // Uncached when the monitor cannot watch the range (or it changed while
  // being registered): still a valid registration, released when its
  // region closes.
  entry->cached = cached;
  MutexLock<Mutex> lock(mutex_);
  ++stats_.registrations;
  entries_.push_back(std::move(owned));
  return entry;
}

void RegistrationCache::Release(Entry* entry) {
  // Invalidations queued since the last lookup: a freed range's entry is
  // released now rather than kept.
  if (entry->cached) MonitorHub::Get().Sync();
  std::vector<std::unique_ptr<Entry>> victims;
  {
    MutexLock<Mutex> lock(mutex_);
    if (--entry->users > 0) return;
    if (entry->cached) {
      unused_.push_front(entry);
      entry->unused = unused_.begin();
      unused_bytes_ += entry->len;
    }
    // An uncached entry goes now; cached ones while the unused exceed the
    // limits, least recently used first.
    auto take =
        [this, &victims](Entry* victim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
          for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (it->get() != victim) continue;
            victims.push_back(std::move(*it));
            entries_.erase(it);
            return;
          }
        };
    if (!entry->cached) take(entry);
    while (!unused_.empty() &&
           (unused_.size() > max_count_ || unused_bytes_ > max_size_)) {
      Entry* oldest = unused_.back();
      unused_.pop_back();
      unused_bytes_ -= oldest->len;
      take(oldest);
    }
    stats_.deregistrations += victims.size();
  }
  for (auto& victim : victims) {
    if (victim->cached) MonitorHub::Get().Unsubscribe(victim->addr, victim->len);
    deregister_(victim->handle);
  }
}

void RegistrationCache::Invalidate(uintptr_t addr, size_t len) {
  std::vector<std::unique_ptr<Entry>> victims;
  std::vector<std::pair<uintptr_t, size_t>> unsubscribe;
  {
    MutexLock<Mutex> lock(mutex_);
    for (Pending& range : pending_) {
      if (Overlaps(range.addr, range.len, addr, len)) range.invalidated = true;
    }
    for (auto it = entries_.begin(); it != entries_.end();) {
      Entry* entry = it->get();
      if (!entry->cached || !Overlaps(entry->addr, entry->len, addr, len)) {
        ++it;
        continue;
      }
      entry->cached = false;
      ++stats_.invalidated;
      unsubscribe.emplace_back(entry->addr, entry->len);
      if (entry->users > 0) {
        ++it;  // released, and then deregistered, when its region closes
        continue;
      }
      unused_.erase(entry->unused);
      unused_bytes_ -= entry->len;
      victims.push_back(std::move(*it));
      it = entries_.erase(it);
    }
    stats_.deregistrations += victims.size();
  }
  // The hub's lock is held (Invalidate is its callback): it is recursive.
  for (auto [start, length] : unsubscribe) {
    MonitorHub::Get().Unsubscribe(start, length);
  }
  for (auto& victim : victims) deregister_(victim->handle);
}

RegistrationCache::Stats RegistrationCache::stats() {
  MutexLock<Mutex> lock(mutex_);
  return stats_;
}

}  // namespace fabric

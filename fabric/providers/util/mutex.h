// File: fabric/providers/util/mutex.h
//
// Locks whose use clang's thread-safety analysis checks (-Wthread-safety;
// `bazel build --config=clang`, run by CI): Mutex, a std::mutex the
// analysis knows, and MutexLock, the scoped lock of Mutex, FutexMutex and
// OptionalMutex (std::lock_guard is not annotated, so the analysis cannot
// see what it holds), and CondLock, the one a std::condition_variable waits
// with. What a lock guards says so in code:
//
//   Mutex registry_mutex_;
//   std::vector<Source*> sources_ ABSL_GUARDED_BY(registry_mutex_);
//   void ArmLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mutex_);
//
//   MutexLock lock(registry_mutex_);   // sources_ may be used from here
#ifndef FABRIC_PROVIDERS_UTIL_MUTEX_H_
#define FABRIC_PROVIDERS_UTIL_MUTEX_H_

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace fabric {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mutex_.lock(); }
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    return mutex_.try_lock();
  }
  void unlock() ABSL_UNLOCK_FUNCTION() { mutex_.unlock(); }

  // The std::mutex itself, for what must name it: CondLock, and the
  // pthread handle FI_WAIT_MUTEX_COND hands to the application.
  std::mutex& native() { return mutex_; }

 private:
  std::mutex mutex_;
};

// Holds `mutex` for its scope: taken by the constructor, or adopted when
// already held (after a successful try_lock); Unlock releases it sooner,
// Lock takes it again.
template <typename LockableMutex>
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(LockableMutex& mutex) ABSL_EXCLUSIVE_LOCK_FUNCTION(mutex)
      : mutex_(mutex) {
    mutex_.lock();
  }
  MutexLock(LockableMutex& mutex, std::adopt_lock_t)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex)
      : mutex_(mutex) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {
    if (held_) mutex_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ABSL_UNLOCK_FUNCTION() {
    mutex_.unlock();
    held_ = false;
  }
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mutex_.lock();
    held_ = true;
  }

 private:
  LockableMutex& mutex_;
  bool held_ = true;
};

// Holds a Mutex for its scope as a std::unique_lock on its std::mutex, so
// that a std::condition_variable can wait with it (the wait releases and
// retakes the mutex; to the analysis it stays held).
class ABSL_SCOPED_LOCKABLE CondLock {
 public:
  explicit CondLock(Mutex& mutex) ABSL_EXCLUSIVE_LOCK_FUNCTION(mutex)
      : lock_(mutex.native()) {}
  ~CondLock() ABSL_UNLOCK_FUNCTION() {}
  CondLock(const CondLock&) = delete;
  CondLock& operator=(const CondLock&) = delete;

  std::unique_lock<std::mutex>& get() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_MUTEX_H_

// File: fabric/providers/util/futex_mutex.h
//
// A mutex of one atomic word: taking and releasing it free is one atomic
// instruction each, and only a contended lock enters the kernel (futex).
// For the locks every data-path call takes (an endpoint's, the progress
// engine's): glibc's pthread_mutex_lock and unlock cost about 60
// instructions a pair here, and a 64 B shm ping-pong iteration took five
// such pairs.
//
// The classic three-state futex lock (0 free, 1 held, 2 held with
// waiters). Meets the Lockable requirements (std::lock_guard,
// std::unique_lock, std::try_to_lock), and clang's thread-safety analysis
// follows it (mutex.h: MutexLock). Not for condition variables.
#ifndef FABRIC_PROVIDERS_UTIL_FUTEX_MUTEX_H_
#define FABRIC_PROVIDERS_UTIL_FUTEX_MUTEX_H_

#include <stdint.h>

#include <atomic>

#include "absl/base/thread_annotations.h"

namespace fabric {

class ABSL_LOCKABLE FutexMutex {
 public:
  FutexMutex() = default;
  FutexMutex(const FutexMutex&) = delete;
  FutexMutex& operator=(const FutexMutex&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    uint32_t free = 0;
    if (!state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
      LockContended();
    }
  }
  bool try_lock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {
    uint32_t free = 0;
    return state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() ABSL_UNLOCK_FUNCTION() {
    if (state_.exchange(0, std::memory_order_release) == 2) WakeOne();
  }
  // Whether some thread holds it (for assertions: not which one).
  bool held() const { return state_.load(std::memory_order_relaxed) != 0; }

 private:
  void LockContended();
  void WakeOne();

  std::atomic<uint32_t> state_{0};
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_FUTEX_MUTEX_H_

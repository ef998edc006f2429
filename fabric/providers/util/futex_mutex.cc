#include "fabric/providers/util/futex_mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fabric/providers/util/cpu_relax.h"

namespace fabric {
namespace {

// Tries before sleeping: a holder on another CPU usually lets go within a
// few hundred cycles, and a futex sleep and wake cost microseconds.
constexpr int kSpins = 64;

}  // namespace

void FutexMutex::LockContended() {
  for (int i = 0; i < kSpins; ++i) {
    CpuRelax();
    uint32_t free = 0;
    if (state_.load(std::memory_order_relaxed) == 0 &&
        state_.compare_exchange_weak(free, 1, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
      return;
    }
  }
  // From here on the lock is marked as having waiters (2), so that its
  // holder's unlock wakes one; taking it as 2 may cost one spurious wake.
  while (state_.exchange(2, std::memory_order_acquire) != 0) {
    syscall(SYS_futex, &state_, FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr, 0);
  }
}

void FutexMutex::WakeOne() {
  syscall(SYS_futex, &state_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace fabric

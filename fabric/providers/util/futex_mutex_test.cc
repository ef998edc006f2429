#include "fabric/providers/util/futex_mutex.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// Locks and unlocks by hand, as the thread-safety analysis cannot follow
// through ASSERT_TRUE: it is off here.
void TryLockFailsWhileHeld() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  FutexMutex mutex;
  ASSERT_TRUE(mutex.try_lock());
  EXPECT_FALSE(mutex.try_lock());
  std::thread other([&mutex] { EXPECT_FALSE(mutex.try_lock()); });
  other.join();
  mutex.unlock();
  std::unique_lock<FutexMutex> lock(mutex, std::try_to_lock);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(FutexMutexTest, TryLockFailsWhileHeld) { TryLockFailsWhileHeld(); }

// Threads add to a plain counter under the lock; some hold it across a
// sleep, so that the others spin out and sleep in the kernel, and every
// wake must come. A lost update or a missed wake (a hang, ended by the
// test's timeout) would show.
TEST(FutexMutexTest, ExcludesAndWakesUnderContention) {
  FutexMutex mutex;
  long counter = 0;
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<FutexMutex> lock(mutex);
        long seen = counter;
        if (i % 2000 == t) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        counter = seen + 1;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter, long{kThreads} * kRounds);
}

// The holder blocks a locker in the kernel for a while; unlock must wake
// it, and what the holder wrote must be visible to it.
TEST(FutexMutexTest, UnlockWakesASleepingLocker) {
  FutexMutex mutex;
  mutex.lock();
  int value = 0;
  std::thread locker([&] {
    std::lock_guard<FutexMutex> lock(mutex);
    EXPECT_EQ(value, 42);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  value = 42;
  mutex.unlock();
  locker.join();
}

}  // namespace
}  // namespace fabric

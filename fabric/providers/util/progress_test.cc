// The engine's handling of sources whose input arrives in shared memory
// (always_run, PrepareToSleep), next to ordinary fd sources.
#include "fabric/providers/util/progress.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace fabric {
namespace {

// A source with an eventfd that is never written: Progress only runs when
// the engine calls it unasked.
class FdSource : public ProgressSource {
 public:
  explicit FdSource(bool automatic = false)
      : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), automatic_(automatic) {}
  ~FdSource() override { close(fd_); }
  void Progress() override { runs.fetch_add(1); }
  int progress_fd() const override { return fd_; }
  bool auto_progress() const override { return automatic_; }
  void Ring() {
    uint64_t one = 1;
    EXPECT_EQ(write(fd_, &one, sizeof(one)), 8);
  }
  std::atomic<int> runs{0};

 private:
  int fd_;
  bool automatic_;
};

// Whether the engine's epoll fd is readable now.
bool Readable(const ProgressEngine& engine) {
  pollfd ready = {engine.fd(), POLLIN, 0};
  return poll(&ready, 1, 0) == 1;
}

// Like a shared-memory endpoint: input is `pending`, which rings the fd
// only after PrepareToSleep said the reader sleeps.
class SharedMemorySource : public FdSource {
 public:
  explicit SharedMemorySource(bool automatic) : automatic_(automatic) {}
  bool auto_progress() const override { return automatic_; }
  bool always_run() const override { return true; }
  bool PrepareToSleep() override {
    sleep_calls.fetch_add(1);
    return !pending.load();
  }
  void Progress() override {
    FdSource::Progress();
    if (pending.exchange(false)) taken.fetch_add(1);
  }
  std::atomic<bool> pending{false};
  std::atomic<int> taken{0};
  std::atomic<int> sleep_calls{0};

 private:
  bool automatic_;
};

TEST(ProgressEngineTest, AlwaysRunSourcesRunOnEveryPassAmongManySources) {
  ProgressEngine engine;
  std::vector<std::unique_ptr<FdSource>> quiet;
  for (int i = 0; i < 12; ++i) {
    quiet.push_back(std::make_unique<FdSource>());
    engine.Add(quiet.back().get());
  }
  SharedMemorySource shared(/*automatic=*/false);
  engine.Add(&shared);
  for (int i = 0; i < 5; ++i) engine.Run();
  EXPECT_EQ(shared.runs.load(), 5);
  for (const auto& source : quiet) EXPECT_EQ(source->runs.load(), 0);
  quiet[3]->Ring();
  engine.Run();
  EXPECT_EQ(quiet[3]->runs.load(), 1);
  EXPECT_EQ(shared.runs.load(), 6);
  engine.Remove(&shared);
  engine.Run();
  EXPECT_EQ(shared.runs.load(), 6);
  for (const auto& source : quiet) engine.Remove(source.get());
}

// A source's fd in an epoll set costs each packet a kernel callback: the
// main set holds the fds only while something may block on it.
TEST(ProgressEngineTest, TheEpollSetHoldsTheFdsOnlyWhileSomethingMayBlock) {
  ProgressEngine engine;
  FdSource source;
  engine.Add(&source);
  source.Ring();
  EXPECT_FALSE(Readable(engine));
  EXPECT_TRUE(engine.PrepareToSleep());  // what fi_trywait asks
  EXPECT_TRUE(Readable(engine));
  // An application that polls without waiting: the set empties again.
  for (int i = 0; i < 1000; ++i) engine.Run();
  EXPECT_FALSE(Readable(engine));
  EXPECT_GT(source.runs.load(), 0);
  // Once the application has the fd, the set keeps the sources.
  engine.KeepArmed();
  for (int i = 0; i < 1000; ++i) engine.Run();
  EXPECT_TRUE(Readable(engine));
  engine.Remove(&source);
  EXPECT_FALSE(Readable(engine));
}

TEST(ProgressEngineTest, AWaitingThreadWakesForAnFdThatRings) {
  ProgressEngine engine;
  FdSource source;
  engine.Add(&source);
  for (int i = 0; i < 1000; ++i) engine.Run();  // the set is empty
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    source.Ring();
  });
  int before = source.runs.load();
  auto start = std::chrono::steady_clock::now();
  engine.WaitAndRun(20000);
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  EXPECT_GT(source.runs.load(), before);
  EXPECT_LT(waited, std::chrono::seconds(10));  // woken, not timed out
  engine.Remove(&source);
}

// A source whose first pass on the auto thread is slow (as when that thread
// loses its CPU in the middle of it), counting the passes of other threads.
class SlowAutoSource : public FdSource {
 public:
  SlowAutoSource() : FdSource(/*automatic=*/true) {}
  bool always_run() const override { return true; }
  bool PrepareToSleep() override { return !pending.load(); }
  void Progress() override {
    if (!ProgressEngine::InAutoThread()) {
      app_passes.fetch_add(1);
      return;
    }
    if (pending.exchange(false)) {
      inside = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      inside = false;
    }
  }
  std::atomic<bool> pending{true};
  std::atomic<bool> inside{false};
  std::atomic<int> app_passes{0};
};

TEST(ProgressEngineTest, RunWaitsForThePassOfTheAutoThread) {
  ProgressEngine engine;
  SlowAutoSource source;
  engine.Add(&source);
  for (int i = 0; i < 1000 && !source.inside.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(source.inside.load());
  // Returning at once would leave this call without a pass of its own.
  engine.Run();
  EXPECT_FALSE(source.inside.load());
  EXPECT_EQ(source.app_passes.load(), 1);
  engine.Remove(&source);
}

TEST(ProgressEngineTest, TheAutoThreadWakesForAnFdThatRings) {
  ProgressEngine engine;
  FdSource source(/*automatic=*/true);
  engine.Add(&source);
  source.Ring();
  for (int i = 0; i < 1000 && source.runs.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(source.runs.load(), 0);
  engine.Remove(&source);
}

TEST(ProgressEngineTest, AWaitDoesNotSleepOverInputAlreadyWaiting) {
  ProgressEngine engine;
  SharedMemorySource shared(/*automatic=*/false);
  engine.Add(&shared);
  shared.pending = true;
  auto start = std::chrono::steady_clock::now();
  engine.WaitAndRun(20000);
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(shared.taken.load(), 1);
  EXPECT_GE(shared.sleep_calls.load(), 1);
  // Far below the 20 s timeout: it did not block.
  EXPECT_LT(waited, std::chrono::seconds(10));
  EXPECT_TRUE(engine.PrepareToSleep());  // taken: nothing waits now
  engine.Remove(&shared);
}

TEST(ProgressEngineTest, ASleepingWaitWakesWhenTheFdRings) {
  ProgressEngine engine;
  SharedMemorySource shared(/*automatic=*/false);
  engine.Add(&shared);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    shared.pending = true;
    shared.Ring();  // what a writer does for a reader that sleeps
  });
  auto start = std::chrono::steady_clock::now();
  engine.WaitAndRun(20000);
  auto waited = std::chrono::steady_clock::now() - start;
  writer.join();
  EXPECT_EQ(shared.taken.load(), 1);
  EXPECT_LT(waited, std::chrono::seconds(10));
  engine.Remove(&shared);
}

TEST(ProgressEngineTest, TheAutoThreadTakesInputThatRingsNoFd) {
  ProgressEngine engine;
  SharedMemorySource shared(/*automatic=*/true);
  engine.Add(&shared);
  shared.pending = true;  // the fd never rings
  for (int i = 0; i < 1000 && shared.taken.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(shared.taken.load(), 1);
  engine.Remove(&shared);
}

// Like an endpoint holding a message until its CQ has room: it asks for the
// next pass (RunAgain) while `held`, and no fd ever rings for it.
class HeldWorkSource : public FdSource {
 public:
  HeldWorkSource(ProgressEngine* engine, bool automatic)
      : FdSource(automatic), engine_(engine) {}
  void Progress() override {
    FdSource::Progress();
    if (held.load()) engine_->RunAgain(this);
  }
  std::atomic<bool> held{true};

 private:
  ProgressEngine* engine_;
};

TEST(ProgressEngineTest, ASourceThatAsksAgainRunsOnTheNextPassesOnly) {
  for (int sources : {1, 12}) {  // polled one by one, and through epoll
    ProgressEngine engine;
    std::vector<std::unique_ptr<FdSource>> quiet;
    for (int i = 1; i < sources; ++i) {
      quiet.push_back(std::make_unique<FdSource>());
      engine.Add(quiet.back().get());
    }
    HeldWorkSource held(&engine, /*automatic=*/false);
    engine.Add(&held);
    engine.Run();
    EXPECT_EQ(held.runs.load(), 0) << sources << " sources: nothing asked";
    engine.RunAgain(&held);
    for (int i = 0; i < 3; ++i) engine.Run();
    EXPECT_EQ(held.runs.load(), 3) << sources << " sources";
    held.held = false;  // its last pass does not ask again
    for (int i = 0; i < 3; ++i) engine.Run();
    EXPECT_EQ(held.runs.load(), 4) << sources << " sources";
    engine.Remove(&held);
  }
}

TEST(ProgressEngineTest, TheAutoThreadComesBackForHeldWork) {
  ProgressEngine engine;
  HeldWorkSource held(&engine, /*automatic=*/true);
  engine.Add(&held);
  engine.RunAgain(&held);
  // No application pass and no fd: the auto thread's timed-out waits.
  for (int i = 0; i < 1000 && held.runs.load() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(held.runs.load(), 3);
  held.held = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int settled = held.runs.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(held.runs.load(), settled) << "runs on after the work went";
  engine.Remove(&held);
}

TEST(ProgressEngineTest, ARemovedSourceIsNotRunAgain) {
  ProgressEngine engine;
  FdSource quiet;  // keeps the engine running passes
  engine.Add(&quiet);
  auto held = std::make_unique<HeldWorkSource>(&engine, /*automatic=*/false);
  engine.Add(held.get());
  engine.RunAgain(held.get());
  engine.Remove(held.get());
  held.reset();
  engine.Run();  // asan: no use of the freed source
  engine.Remove(&quiet);
}

}  // namespace
}  // namespace fabric

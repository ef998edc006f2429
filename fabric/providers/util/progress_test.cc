// The engine's handling of sources whose input arrives in shared memory
// (always_run, PrepareToSleep), next to ordinary fd sources.
#include "fabric/providers/util/progress.h"

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
  FdSource() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~FdSource() override { close(fd_); }
  void Progress() override { runs.fetch_add(1); }
  int progress_fd() const override { return fd_; }
  bool auto_progress() const override { return false; }
  void Ring() {
    uint64_t one = 1;
    EXPECT_EQ(write(fd_, &one, sizeof(one)), 8);
  }
  std::atomic<int> runs{0};

 private:
  int fd_;
};

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

}  // namespace
}  // namespace fabric

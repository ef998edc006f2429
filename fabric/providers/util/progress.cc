#include "fabric/providers/util/progress.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace {

// How long the auto-progress thread sleeps in one wait at most (so that it
// notices the engine closing).
constexpr int kAutoWaitMillis = 10;
constexpr int kMaxEvents = 64;

void Control(int epoll_fd, int op, ProgressSource* source, uint32_t events) {
  int fd = source->progress_fd();
  if (epoll_fd < 0 || fd < 0) return;
  epoll_event event = {};
  event.events = events;
  event.data.ptr = source;
  epoll_ctl(epoll_fd, op, fd, &event);
}

}  // namespace

ProgressEngine::ProgressEngine()
    : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
      auto_epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

ProgressEngine::~ProgressEngine() {
  stopping_.store(true);
  std::thread auto_thread;
  {
    MutexLock lock(thread_mutex_);
    auto_thread = std::move(auto_thread_);
  }
  if (auto_thread.joinable()) auto_thread.join();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (auto_epoll_fd_ >= 0) close(auto_epoll_fd_);
}

void ProgressEngine::Add(ProgressSource* source) {
  {
    MutexLock lock(registry_mutex_);
    epoll_events_[source] = EPOLLIN;
    if (main_armed_) {
      Control(epoll_fd_, EPOLL_CTL_ADD, source, EPOLLIN);
      arm_pending_.store(true);
    }
    if (auto_armed_ && source->auto_progress()) {
      Control(auto_epoll_fd_, EPOLL_CTL_ADD, source, EPOLLIN | EPOLLET);
    }
    if (source->poll_directly() || source->always_run()) {
      direct_.push_back(source);
    } else {
      polled_.push_back(Entry{source, {source->progress_fd(), POLLIN, 0}});
    }
    if (source->always_run()) always_.push_back(source);
    // Many sources: passes find the ready ones with epoll_wait.
    if (direct_.size() + polled_.size() > kPollLimit) ArmLocked(false, true);
    registry_version_.fetch_add(1);
  }
  source_count_.fetch_add(1);
  if (!source->auto_progress()) return;
  MutexLock lock(thread_mutex_);
  if (!auto_thread_.joinable()) {
    auto_started_.store(true);
    auto_thread_ = std::thread([this] { AutoLoop(); });
  }
}

void ProgressEngine::Remove(ProgressSource* source) {
  MutexLock lock(run_mutex_);
  {
    MutexLock registry_lock(registry_mutex_);
    if (epoll_events_.erase(source) > 0) {
      if (main_armed_) Control(epoll_fd_, EPOLL_CTL_DEL, source, 0);
      if (auto_armed_ && source->auto_progress()) {
        Control(auto_epoll_fd_, EPOLL_CTL_DEL, source, 0);
      }
    }
    direct_.erase(std::remove(direct_.begin(), direct_.end(), source),
                  direct_.end());
    always_.erase(std::remove(always_.begin(), always_.end(), source),
                  always_.end());
    polled_.erase(std::remove_if(polled_.begin(), polled_.end(),
                                 [source](const Entry& entry) {
                                   return entry.source == source;
                                 }),
                  polled_.end());
    again_.erase(std::remove(again_.begin(), again_.end(), source),
                 again_.end());
    registry_version_.fetch_add(1);
  }
  source_count_.fetch_sub(1);
}

void ProgressEngine::SetEpollEvents(ProgressSource* source, uint32_t events) {
  MutexLock lock(registry_mutex_);
  auto it = epoll_events_.find(source);
  if (it == epoll_events_.end()) return;
  it->second = events;
  if (main_armed_) Control(epoll_fd_, EPOLL_CTL_MOD, source, events);
  if (auto_armed_ && source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_MOD, source, events | EPOLLET);
  }
}

void ProgressEngine::ArmLocked(bool auto_set, bool armed) {
  bool& state = auto_set ? auto_armed_ : main_armed_;
  if (state == armed) return;
  state = armed;
  if (!auto_set) {
    main_armed_hint_.store(armed, std::memory_order_relaxed);
    if (armed) arm_pending_.store(true);
  }
  int epoll_fd = auto_set ? auto_epoll_fd_ : epoll_fd_;
  for (const auto& [source, events] : epoll_events_) {
    if (auto_set && !source->auto_progress()) continue;
    Control(epoll_fd, armed ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, source,
            events | (auto_set ? static_cast<uint32_t>(EPOLLET) : 0u));
  }
}

void ProgressEngine::MaybeDisarmMain() {
  MutexLock lock(registry_mutex_);
  busy_runs_.store(0, std::memory_order_relaxed);
  if (keep_armed_ || sleepers_ > 0 ||
      direct_.size() + polled_.size() > kPollLimit) {
    return;
  }
  ArmLocked(false, false);
}

void ProgressEngine::KeepArmed() {
  MutexLock lock(registry_mutex_);
  keep_armed_ = true;
  ArmLocked(false, true);
}

void ProgressEngine::SetPollEvents(ProgressSource* source, int fd,
                                   short events) {
  MutexLock lock(registry_mutex_);
  for (Entry& entry : polled_) {
    if (entry.source == source) entry.poll = {fd, events, 0};
  }
  registry_version_.fetch_add(1);
}

void ProgressEngine::WantWrite(ProgressSource* source, bool want) {
  uint32_t out = want ? static_cast<uint32_t>(EPOLLOUT) : 0u;
  SetEpollEvents(source, EPOLLIN | out);
  SetPollEvents(source, source->progress_fd(),
                static_cast<short>(POLLIN | (want ? POLLOUT : 0)));
}

void ProgressEngine::RunAgain(ProgressSource* source) {
  if (source->always_run()) return;
  MutexLock lock(registry_mutex_);
  if (std::find(again_.begin(), again_.end(), source) == again_.end()) {
    again_.push_back(source);
  }
  again_requested_.store(true, std::memory_order_release);
}

void ProgressEngine::Disarm(ProgressSource* source) {
  SetEpollEvents(source, 0);
  SetPollEvents(source, -1, 0);  // poll(2) reports hangups unasked
}

void ProgressEngine::Refresh() {
  if (registry_version_.load() == snapshot_version_) return;
  MutexLock lock(registry_mutex_);
  direct_snapshot_ = direct_;
  always_snapshot_ = always_;
  poll_snapshot_.clear();
  polled_snapshot_.clear();
  for (const Entry& entry : polled_) {
    poll_snapshot_.push_back(entry.poll);
    polled_snapshot_.push_back(entry.source);
  }
  snapshot_version_ = registry_version_.load();
}

void ProgressEngine::RunReady(int epoll_fd) {
  epoll_event events[kMaxEvents];
  int n = EpollPoll(epoll_fd, events, kMaxEvents);
  for (int i = 0; i < n; ++i) {
    static_cast<ProgressSource*>(events[i].data.ptr)->Progress();
  }
}

void ProgressEngine::RunPolled() {
  int ready = PollNow(poll_snapshot_.data(), poll_snapshot_.size());
  for (size_t i = 0; ready > 0 && i < poll_snapshot_.size(); ++i) {
    if (poll_snapshot_[i].revents == 0) continue;
    --ready;
    polled_snapshot_[i]->Progress();
  }
}

void ProgressEngine::RunAgainRequested(bool auto_only) {
  {
    MutexLock lock(registry_mutex_);
    // The ones this pass takes move to the back, then out.
    auto taken = auto_only ? std::stable_partition(
                                 again_.begin(), again_.end(),
                                 [](ProgressSource* source) {
                                   return !source->auto_progress();
                                 })
                           : again_.begin();
    again_snapshot_.assign(taken, again_.end());
    again_.erase(taken, again_.end());
    again_requested_.store(!again_.empty(), std::memory_order_relaxed);
  }
  // Each asks again (RunAgain) while it still waits.
  for (ProgressSource* source : again_snapshot_) source->Progress();
}

void ProgressEngine::Run() {
  if (source_count_.load(std::memory_order_relaxed) == 0) return;
  if (auto_started_.load(std::memory_order_relaxed)) {
    // Only a sign of life for the auto thread: a load and a store, not a
    // locked increment (threads racing may lose counts, never all).
    app_runs_.store(app_runs_.load(std::memory_order_relaxed) + 1,
                    std::memory_order_relaxed);
  }
  if (!run_mutex_.try_lock()) {
    // Another application thread is advancing the sources: nothing to add.
    // The auto thread's turn is short, unless it lost its CPU holding the
    // lock (two CPUs, two polling processes): then waiting gives it the CPU
    // back, where failing at once would spin for the rest of a time slice
    // (measured: 4.6 ms without progress).
    if (!auto_holds_run_.load(std::memory_order_relaxed)) return;
    run_mutex_.lock();
  }
  MutexLock lock(run_mutex_, std::adopt_lock);
  Refresh();
  if (arm_pending_.load(std::memory_order_relaxed) &&
      arm_pending_.exchange(false)) {
    for (ProgressSource* source : direct_snapshot_) source->ArmFds();
  }
  if (again_requested_.load(std::memory_order_acquire)) {
    RunAgainRequested(/*auto_only=*/false);
  }
  // Many sources: one epoll_wait finds the ready ones, whatever their kind.
  if (direct_snapshot_.size() + poll_snapshot_.size() > kPollLimit) {
    RunReady(epoll_fd_);
    for (ProgressSource* source : always_snapshot_) source->Progress();
    return;
  }
  for (ProgressSource* source : direct_snapshot_) source->Progress();
  if (!poll_snapshot_.empty()) RunPolled();
  lock.Unlock();
  if (main_armed_hint_.load(std::memory_order_relaxed) &&
      busy_runs_.fetch_add(1, std::memory_order_relaxed) + 1 >= kBusyRuns) {
    MaybeDisarmMain();
  }
}

void ProgressEngine::WaitAndRun(int timeout_ms) {
  if (timeout_ms != 0) {
    {
      MutexLock lock(registry_mutex_);
      ++sleepers_;
    }
    if (PrepareToSleep()) {
      pollfd ready = {epoll_fd_, POLLIN, 0};
      poll(&ready, 1, timeout_ms);
    }
    MutexLock lock(registry_mutex_);
    --sleepers_;
  }
  Run();
}

bool ProgressEngine::PrepareToSleep(bool auto_only) {
  if (!auto_only) {
    // Something may block on the main set: it holds the fds until passes
    // without waits show it does not.
    MutexLock lock(registry_mutex_);
    ArmLocked(false, true);
    busy_runs_.store(0, std::memory_order_relaxed);
  }
  MutexLock lock(run_mutex_);
  AutoHoldsRun holding(this);
  Refresh();
  bool sleep = true;
  if (!auto_only) arm_pending_.store(false);
  for (ProgressSource* source : direct_snapshot_) {
    if (!auto_only || source->auto_progress()) source->ArmFds();
  }
  for (ProgressSource* source : always_snapshot_) {
    if (auto_only && !source->auto_progress()) continue;
    if (!source->PrepareToSleep()) sleep = false;
  }
  return sleep;
}

namespace {
// Global-dynamic TLS, as cq.cc's reader sink (it says why).
thread_local bool in_auto_thread = false;
}  // namespace

bool ProgressEngine::InAutoThread() { return in_auto_thread; }

ProgressEngine::AutoHoldsRun::AutoHoldsRun(ProgressEngine* engine)
    : engine_(in_auto_thread ? engine : nullptr) {
  if (engine_ != nullptr) {
    engine_->auto_holds_run_.store(true, std::memory_order_relaxed);
  }
}

ProgressEngine::AutoHoldsRun::~AutoHoldsRun() {
  if (engine_ != nullptr) {
    engine_->auto_holds_run_.store(false, std::memory_order_relaxed);
  }
}

void ProgressEngine::AutoLoop() {
  in_auto_thread = true;
  uint64_t runs_seen = app_runs_.load(std::memory_order_relaxed);
  while (!stopping_.load()) {
    // An application that polls is making progress itself: sleep instead of
    // waking for each message it will take anyway. (A count, not a clock:
    // reading the time on every pass costs the polling loop more.)
    uint64_t runs = app_runs_.load(std::memory_order_relaxed);
    if (runs != runs_seen) {
      runs_seen = runs;
      {
        MutexLock lock(registry_mutex_);
        ArmLocked(true, false);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(kAutoIdleMicros));
      continue;
    }
    {
      MutexLock lock(registry_mutex_);
      ArmLocked(true, true);
    }
    // Wait without taking the events, so that a source removed meanwhile
    // never comes back from epoll_wait.
    pollfd ready = {auto_epoll_fd_, POLLIN, 0};
    bool input_waiting = !PrepareToSleep(/*auto_only=*/true);
    if (!input_waiting && poll(&ready, 1, kAutoWaitMillis) <= 0) {
      if (again_requested_.load(std::memory_order_acquire)) {
        MutexLock lock(run_mutex_);
        AutoHoldsRun holding(this);
        RunAgainRequested(/*auto_only=*/true);
      }
      continue;
    }
    MutexLock lock(run_mutex_);
    AutoHoldsRun holding(this);
    RunReady(auto_epoll_fd_);
    if (!input_waiting) continue;
    Refresh();
    for (ProgressSource* source : always_snapshot_) {
      if (source->auto_progress()) source->Progress();
    }
  }
}

}  // namespace fabric

#include "fabric/providers/util/progress.h"

#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace fabric {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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
    std::lock_guard<std::mutex> lock(thread_mutex_);
    auto_thread = std::move(auto_thread_);
  }
  if (auto_thread.joinable()) auto_thread.join();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (auto_epoll_fd_ >= 0) close(auto_epoll_fd_);
}

void ProgressEngine::Add(ProgressSource* source) {
  Control(epoll_fd_, EPOLL_CTL_ADD, source, EPOLLIN);
  if (source->poll_directly()) {
    std::lock_guard<std::mutex> lock(direct_mutex_);
    direct_.push_back(source);
    direct_version_.fetch_add(1);
  } else {
    epoll_count_.fetch_add(1);
  }
  source_count_.fetch_add(1);
  if (!source->auto_progress()) return;
  Control(auto_epoll_fd_, EPOLL_CTL_ADD, source, EPOLLIN | EPOLLET);
  std::lock_guard<std::mutex> lock(thread_mutex_);
  if (!auto_thread_.joinable()) {
    last_app_run_micros_.store(NowMicros());
    auto_started_.store(true);
    auto_thread_ = std::thread([this] { AutoLoop(); });
  }
}

void ProgressEngine::Remove(ProgressSource* source) {
  std::lock_guard<std::mutex> lock(run_mutex_);
  Control(epoll_fd_, EPOLL_CTL_DEL, source, 0);
  if (source->poll_directly()) {
    std::lock_guard<std::mutex> direct_lock(direct_mutex_);
    direct_.erase(std::find(direct_.begin(), direct_.end(), source));
    direct_version_.fetch_add(1);
  } else {
    epoll_count_.fetch_sub(1);
  }
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_DEL, source, 0);
  }
  source_count_.fetch_sub(1);
}

void ProgressEngine::WantWrite(ProgressSource* source, bool want) {
  uint32_t out = want ? static_cast<uint32_t>(EPOLLOUT) : 0u;
  Control(epoll_fd_, EPOLL_CTL_MOD, source, EPOLLIN | out);
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_MOD, source, EPOLLIN | EPOLLET | out);
  }
}

void ProgressEngine::Disarm(ProgressSource* source) {
  Control(epoll_fd_, EPOLL_CTL_MOD, source, 0);
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_MOD, source, 0);
  }
}

void ProgressEngine::RunReady(int epoll_fd) {
  epoll_event events[kMaxEvents];
  int n = epoll_wait(epoll_fd, events, kMaxEvents, 0);
  for (int i = 0; i < n; ++i) {
    auto* source = static_cast<ProgressSource*>(events[i].data.ptr);
    // Sources polled directly had their turn (the auto thread's pass
    // advances them from here).
    if (epoll_fd == epoll_fd_ && source->poll_directly()) continue;
    source->Progress();
  }
}

void ProgressEngine::RunDirect() {
  uint64_t version = direct_version_.load();
  if (version != snapshot_version_) {
    std::lock_guard<std::mutex> lock(direct_mutex_);
    direct_snapshot_ = direct_;
    snapshot_version_ = direct_version_.load();
  }
  for (ProgressSource* source : direct_snapshot_) source->Progress();
}

void ProgressEngine::Run() {
  if (source_count_.load(std::memory_order_relaxed) == 0) return;
  if (auto_started_.load(std::memory_order_relaxed)) {
    last_app_run_micros_.store(NowMicros(), std::memory_order_relaxed);
  }
  std::unique_lock<std::mutex> lock(run_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  RunDirect();
  if (epoll_count_.load(std::memory_order_relaxed) > 0) RunReady(epoll_fd_);
}

void ProgressEngine::WaitAndRun(int timeout_ms) {
  pollfd ready = {epoll_fd_, POLLIN, 0};
  poll(&ready, 1, timeout_ms);
  Run();
}

namespace {
thread_local bool in_auto_thread = false;
}  // namespace

bool ProgressEngine::InAutoThread() { return in_auto_thread; }

void ProgressEngine::AutoLoop() {
  in_auto_thread = true;
  while (!stopping_.load()) {
    // An application that polls is making progress itself: sleep instead of
    // waking for each message it will take anyway.
    int64_t idle =
        NowMicros() - last_app_run_micros_.load(std::memory_order_relaxed);
    if (idle < kAutoIdleMicros) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(kAutoIdleMicros - idle));
      continue;
    }
    // Wait without taking the events, so that a source removed meanwhile
    // never comes back from epoll_wait.
    pollfd ready = {auto_epoll_fd_, POLLIN, 0};
    if (poll(&ready, 1, kAutoWaitMillis) <= 0) continue;
    std::lock_guard<std::mutex> lock(run_mutex_);
    RunReady(auto_epoll_fd_);
  }
}

}  // namespace fabric

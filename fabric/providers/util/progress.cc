#include "fabric/providers/util/progress.h"

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

// The auto-progress thread also sweeps every source this often, for work
// that no new input announces (a receive posted for data already waiting,
// a send backlog).
constexpr int kAutoSweepMillis = 1;

void Control(int epoll_fd, int op, int fd, uint32_t events) {
  if (epoll_fd < 0 || fd < 0) return;
  epoll_event event = {};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(epoll_fd, op, fd, &event);
}

}  // namespace

ProgressEngine::ProgressEngine()
    : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)),
      auto_epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

ProgressEngine::~ProgressEngine() {
  stopping_.store(true);
  if (auto_thread_.joinable()) auto_thread_.join();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (auto_epoll_fd_ >= 0) close(auto_epoll_fd_);
}

void ProgressEngine::Add(ProgressSource* source) {
  std::lock_guard<std::mutex> lock(mutex_);
  sources_.push_back(source);
  source_count_.store(static_cast<int>(sources_.size()));
  Control(epoll_fd_, EPOLL_CTL_ADD, source->progress_fd(), EPOLLIN);
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_ADD, source->progress_fd(),
            EPOLLIN | EPOLLET);
    if (!auto_thread_.joinable()) {
      auto_thread_ = std::thread([this] { AutoLoop(); });
    }
  }
}

void ProgressEngine::Remove(ProgressSource* source) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(sources_.begin(), sources_.end(), source);
  if (it == sources_.end()) return;
  sources_.erase(it);
  source_count_.store(static_cast<int>(sources_.size()));
  Control(epoll_fd_, EPOLL_CTL_DEL, source->progress_fd(), 0);
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_DEL, source->progress_fd(), 0);
  }
}

void ProgressEngine::WantWrite(ProgressSource* source, bool want) {
  uint32_t out = want ? static_cast<uint32_t>(EPOLLOUT) : 0u;
  Control(epoll_fd_, EPOLL_CTL_MOD, source->progress_fd(), EPOLLIN | out);
  if (source->auto_progress()) {
    Control(auto_epoll_fd_, EPOLL_CTL_MOD, source->progress_fd(),
            EPOLLIN | EPOLLET | out);
  }
}

void ProgressEngine::Run() {
  if (source_count_.load(std::memory_order_relaxed) == 0) return;
  last_app_run_micros_.store(NowMicros(), std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (size_t i = 0; i < sources_.size(); ++i) sources_[i]->Progress();
}

void ProgressEngine::WaitAndRun(int timeout_ms) {
  epoll_event events[8];
  epoll_wait(epoll_fd_, events, 8, timeout_ms);
  Run();
}

void ProgressEngine::AutoLoop() {
  epoll_event events[16];
  while (!stopping_.load()) {
    epoll_wait(auto_epoll_fd_, events, 16, kAutoSweepMillis);
    // An application that polls is making progress itself.
    if (NowMicros() - last_app_run_micros_.load(std::memory_order_relaxed) <
        kAutoIdleMicros) {
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < sources_.size(); ++i) {
      if (sources_[i]->auto_progress()) sources_[i]->Progress();
    }
  }
}

}  // namespace fabric

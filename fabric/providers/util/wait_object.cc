#include "fabric/providers/util/wait_object.h"

#include <errno.h>
#include <poll.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/syscalls.h"

namespace fabric {

namespace {

// Blocking waits with sources to advance sleep in the engine's epoll at most
// this long before they look at their own condition again (another thread
// may have met it).
constexpr int kProgressSliceMillis = 1;

// An epoll fd readable when `a` or `b` is; -1 on failure.
int PollBoth(int a, int b) {
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return -1;
  for (int fd : {a, b}) {
    epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
      close(epoll_fd);
      return -1;
    }
  }
  return epoll_fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WaitObject>> WaitObject::Create(
    int kind, WaitSetState* set, ProgressEngine* engine) {
  absl::StatusOr<std::unique_ptr<WaitObject>> wait = CreateKind(kind, set);
  if (!wait.ok() || engine == nullptr) return wait;
  WaitObject& object = **wait;
  object.engine_ = engine;
  if (set != nullptr) {
    MutexLock lock(set->engines_mutex);
    ++set->engines[engine];
  }
  if (object.fd_ >= 0) {
    object.poll_fd_ = PollBoth(object.fd_, engine->fd());
    if (object.poll_fd_ < 0) {
      return FiError(errno == EMFILE ? FI_EMFILE : FI_ENOMEM,
                     absl::StrCat("epoll: ", strerror(errno)));
    }
  }
  return wait;
}

absl::StatusOr<std::unique_ptr<WaitObject>> WaitObject::CreateKind(
    int kind, WaitSetState* set) {
  switch (kind) {
    case FI_WAIT_NONE:
    case FI_WAIT_MUTEX_COND:
    case FI_WAIT_YIELD:
      return std::unique_ptr<WaitObject>(
          new WaitObject(static_cast<fi_wait_obj>(kind)));
    case FI_WAIT_UNSPEC:
    case FI_WAIT_FD:
    case FI_WAIT_POLLFD: {
      std::unique_ptr<WaitObject> wait(
          new WaitObject(kind == FI_WAIT_POLLFD ? FI_WAIT_POLLFD : FI_WAIT_FD));
      wait->fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      if (wait->fd_ < 0) {
        return FiError(errno == EMFILE ? FI_EMFILE : FI_ENOMEM,
                       absl::StrCat("eventfd: ", strerror(errno)));
      }
      return wait;
    }
    case FI_WAIT_SET: {
      if (set == nullptr) {
        return FiError(FI_EINVAL, "FI_WAIT_SET needs an open wait set");
      }
      std::unique_ptr<WaitObject> wait(new WaitObject(FI_WAIT_SET));
      wait->set_ = set;
      set->members.fetch_add(1);
      return wait;
    }
    default:
      return FiError(FI_EINVAL, absl::StrCat("unknown wait object ", kind));
  }
}

WaitObject::~WaitObject() {
  if (fd_ >= 0) close(fd_);
  if (poll_fd_ >= 0) close(poll_fd_);
  if (set_ != nullptr) {
    set_->members.fetch_sub(1);
    if (engine_ != nullptr) {
      MutexLock lock(set_->engines_mutex);
      if (--set_->engines[engine_] == 0) set_->engines.erase(engine_);
    }
  }
}

void WaitObject::Signal() {
  if (fd_ >= 0) {
    uint64_t one = 1;
    // The counter only saturates after 2^64-2 signals; EAGAIN is harmless.
    (void)!WriteFd(fd_, &one, sizeof(one));
  }
  // Nothing blocks on FI_WAIT_NONE (every Wait refuses it): a polling
  // loop's completions skip the condition variable.
  if (kind_ != FI_WAIT_NONE) cond_.notify_all();
  if (set_ != nullptr) {
    // Lock order: a member's mutex, then its set's; never the reverse.
    MutexLock lock(set_->wait->mutex());
    set_->signaled = true;
    set_->wait->Signal();
  }
}

void WaitObject::Clear() {
  if (fd_ < 0) return;
  uint64_t count;
  (void)!ReadFd(fd_, &count, sizeof(count));  // EAGAIN when already clear
}

void WaitObject::AddEngine(std::shared_ptr<ProgressEngine> engine) {
  MutexLock lock(extra_mutex_);
  auto& entry = extra_[engine.get()];
  if (entry.second++ > 0) return;
  if (fd_exported_) engine->KeepArmed();
  if (poll_fd_ >= 0) {
    epoll_event event = {};
    event.events = EPOLLIN;
    event.data.fd = engine->fd();
    epoll_ctl(poll_fd_, EPOLL_CTL_ADD, engine->fd(), &event);
  }
  entry.first = std::move(engine);
  extra_count_.fetch_add(1);
}

void WaitObject::ExportFd() {
  MutexLock lock(extra_mutex_);
  fd_exported_ = true;
  if (engine_ != nullptr) engine_->KeepArmed();
  for (const auto& [engine, entry] : extra_) engine->KeepArmed();
}

void WaitObject::RemoveEngine(ProgressEngine* engine) {
  MutexLock lock(extra_mutex_);
  auto it = extra_.find(engine);
  if (it == extra_.end() || --it->second.second > 0) return;
  if (poll_fd_ >= 0) epoll_ctl(poll_fd_, EPOLL_CTL_DEL, engine->fd(), nullptr);
  extra_.erase(it);
  extra_count_.fetch_sub(1);
}

void WaitObject::RunExtraEngines() {
  absl::InlinedVector<std::shared_ptr<ProgressEngine>, 4> engines;
  {
    MutexLock lock(extra_mutex_);
    for (const auto& [engine, entry] : extra_) engines.push_back(entry.first);
  }
  for (const auto& engine : engines) engine->Run();
}

bool WaitObject::Wait(CondLock& lock, int timeout_ms,
                      const std::function<bool()>& ready) {
  if ((engine_ != nullptr && engine_->has_sources()) ||
      extra_count_.load(std::memory_order_relaxed) > 0) {
    return WaitWithProgress(lock, timeout_ms, ready);
  }
  if (timeout_ms < 0) {
    cond_.wait(lock.get(), ready);
    return true;
  }
  return cond_.wait_for(lock.get(), std::chrono::milliseconds(timeout_ms),
                        ready);
}

bool WaitObject::WaitWithProgress(CondLock& lock, int timeout_ms,
                                  const std::function<bool()>& ready) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!ready()) {
    int slice = kProgressSliceMillis;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      slice = std::min<int>(slice, static_cast<int>(left.count()));
    }
    // The engines take their sources' locks: not under this one.
    lock.get().unlock();
    if (engine_ != nullptr) {
      engine_->WaitAndRun(slice);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    }
    if (extra_count_.load(std::memory_order_relaxed) > 0) RunExtraEngines();
    lock.get().lock();
  }
  return true;
}

int WaitObject::Control(int command, void* arg) {
  if (command != FI_GETWAIT && command != FI_GETWAITOBJ) return -FI_ENOSYS;
  if (arg == nullptr) return -FI_EINVAL;
  if (command == FI_GETWAITOBJ) {
    *static_cast<fi_wait_obj*>(arg) = kind_;
    return 0;
  }
  if (kind_ == FI_WAIT_FD || kind_ == FI_WAIT_POLLFD) ExportFd();
  switch (kind_) {
    case FI_WAIT_FD:
      *static_cast<int*>(arg) = poll_fd_ >= 0 ? poll_fd_ : fd_;
      return 0;
    case FI_WAIT_POLLFD: {
      // One fd, which never changes: change_index stays 1.
      auto* pollfds = static_cast<fi_wait_pollfd*>(arg);
      size_t room = pollfds->nfds;
      pollfds->nfds = 1;
      pollfds->change_index = 1;
      if (room < 1 || pollfds->fd == nullptr) return -FI_ETOOSMALL;
      pollfds->fd[0].fd = poll_fd_ >= 0 ? poll_fd_ : fd_;
      pollfds->fd[0].events = POLLIN;
      pollfds->fd[0].revents = 0;
      return 0;
    }
    case FI_WAIT_MUTEX_COND: {
      auto* mutex_cond = static_cast<fi_mutex_cond*>(arg);
      mutex_cond->mutex = mutex_.native().native_handle();
      mutex_cond->cond = cond_.native_handle();
      return 0;
    }
    default:
      return -FI_ENODATA;  // nothing an application can wait on
  }
}

}  // namespace fabric

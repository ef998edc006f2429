// File: fabric/providers/util/wait_object.h
//
// The wait object of an EQ, CQ or counter: how a thread blocks until the
// object has something to report. Every kind blocks the library's own sread
// on a condition variable; FI_WAIT_FD (and FI_WAIT_POLLFD, as a one-entry
// pollfd list) also keeps an eventfd readable while entries are pending, for
// the application's poll/epoll, and FI_WAIT_MUTEX_COND hands out the mutex
// and condition variable themselves.
//
// A wait object knows the ProgressEngine of its owner (a CQ's or counter's
// domain, an EQ's fabric). Reads call Progress()
// first, and Wait() keeps the engine's sources advancing while it blocks,
// so FI_PROGRESS_MANUAL work advances inside the application's reads and
// waits. The fd FI_GETWAIT hands out is then an epoll fd that is also
// readable when one of the engine's sockets is: an application blocked in
// poll/epoll wakes for input that only its next read will process.
//
// An EQ also advances the engines of the domains whose endpoints are bound
// to it (AddEngine): a connection's end (FI_SHUTDOWN) is noticed by its
// domain's engine, and an application that only waits on the EQ for it
// must see it under FI_PROGRESS_MANUAL too. (Not for domains whose
// endpoints drop their locks because the application serializes each
// domain's calls: see UtilDomain::progress.)
#ifndef FABRIC_PROVIDERS_UTIL_WAIT_OBJECT_H_
#define FABRIC_PROVIDERS_UTIL_WAIT_OBJECT_H_

#include <rdma/fi_eq.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "fabric/providers/util/mutex.h"
#include "fabric/providers/util/progress.h"

namespace fabric {

struct WaitSetState;

class WaitObject {
 public:
  // FI_WAIT_NONE, UNSPEC (an fd), FD, POLLFD, MUTEX_COND or YIELD;
  // FI_WAIT_SET with the set's state (a member also signals the set); other
  // kinds FI_EINVAL. `engine` (may be null) advances the owner's sources.
  static absl::StatusOr<std::unique_ptr<WaitObject>> Create(
      int kind, WaitSetState* set = nullptr, ProgressEngine* engine = nullptr);
  ~WaitObject();

  fi_wait_obj kind() const { return kind_; }
  bool can_block() const { return kind_ != FI_WAIT_NONE; }

  // The lock that guards the owner's entries; Signal, Clear and Wait are
  // called with it held.
  Mutex& mutex() ABSL_LOCK_RETURNED(mutex_) { return mutex_; }

  // Advances the owner's sources (manual progress); call without mutex().
  void Progress() {
    if (engine_ != nullptr) engine_->Run();
    if (extra_count_.load(std::memory_order_relaxed) > 0) RunExtraEngines();
  }

  // Also advance `engine` in reads and waits, and wake for its sockets;
  // counted: RemoveEngine as often as AddEngine. Not with mutex() held.
  void AddEngine(std::shared_ptr<ProgressEngine> engine);
  void RemoveEngine(ProgressEngine* engine);

  // Before the application blocks on the wait fd (fi_trywait): false when
  // a source of the owner's engine already has input that would not wake
  // the fd (ProgressSource::PrepareToSleep). Not with mutex() held.
  bool PrepareToSleep() {
    return engine_ == nullptr || engine_->PrepareToSleep();
  }

  // Entries became available.
  void Signal() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // No entry is available any more.
  void Clear() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // Waits, with `lock` (on mutex()) held, until `ready` or `timeout_ms`
  // passes (negative: no limit). False on timeout. `ready` runs with the
  // lock held.
  bool Wait(CondLock& lock, int timeout_ms, const std::function<bool()>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // fi_control on the owner: FI_GETWAIT (*(int*)arg = the fd, an
  // fi_wait_pollfd, -FI_ETOOSMALL with nfds = 1 when it has no room, or
  // *(fi_mutex_cond*)arg) and FI_GETWAITOBJ; other commands -FI_ENOSYS.
  int Control(int command, void* arg);

 private:
  explicit WaitObject(fi_wait_obj kind) : kind_(kind) {}
  static absl::StatusOr<std::unique_ptr<WaitObject>> CreateKind(
      int kind, WaitSetState* set);
  bool WaitWithProgress(CondLock& lock, int timeout_ms,
                        const std::function<bool()>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RunExtraEngines();
  void ExportFd();

  const fi_wait_obj kind_;
  WaitSetState* set_ = nullptr;  // for FI_WAIT_SET
  Mutex mutex_;
  std::condition_variable cond_;
  ProgressEngine* engine_ = nullptr;
  int fd_ = -1;       // eventfd, for FI_WAIT_FD
  int poll_fd_ = -1;  // epoll of fd_ and the engine's fd: what GETWAIT gives
  // AddEngine's engines, with their counts. A leaf lock: the engines run
  // outside it (they take their sources' locks), on shared copies, so that
  // a domain closing meanwhile does not free one that is running.
  Mutex extra_mutex_;
  std::map<ProgressEngine*, std::pair<std::shared_ptr<ProgressEngine>, int>>
      extra_ ABSL_GUARDED_BY(extra_mutex_);
  std::atomic<int> extra_count_{0};
  // The application has the fd (FI_GETWAIT) and may block on it after
  // fi_trywait: the engines keep their sources in the fds it includes.
  bool fd_exported_ ABSL_GUARDED_BY(extra_mutex_) = false;
};

// What a wait set (fi_wait_open) shares with its members: their signals
// wake it. A member's WaitObject keeps `members` counted while it lives.
struct WaitSetState {
  std::unique_ptr<WaitObject> wait;  // the set's own: FD, MUTEX_COND, YIELD
  bool signaled ABSL_GUARDED_BY(wait->mutex()) = false;
  std::atomic<int> members{0};
  // The progress engines of the members (counted per member), which
  // fi_wait advances while it blocks.
  Mutex engines_mutex;
  std::map<ProgressEngine*, int> engines ABSL_GUARDED_BY(engines_mutex);
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_WAIT_OBJECT_H_

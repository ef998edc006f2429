// File: fabric/providers/util/progress.h
//
// How a fabric's sockets make progress (fi_domain(3), "Progress").
// Every object with work of its own (a listening socket, a connection) is a
// ProgressSource registered with its fabric's ProgressEngine.
//
// With FI_PROGRESS_MANUAL the engine advances sources only inside the
// application's calls: reads and waits on CQs, EQs, counters, wait sets and
// poll sets call Run(), and blocking waits sleep in WaitAndRun(), which wakes
// when a source's fd becomes readable. With FI_PROGRESS_AUTO a source is
// also advanced by the engine's own thread, so its work completes while the
// application does something else. That thread stays out of the way while
// the application itself is polling: it only steps in after the
// application has not called Run() for about kAutoIdleMicros (1 to 2 ms).
//
// While the engine has at most kPollLimit sources, a pass advances those
// that poll directly and asks poll(2) about the others (cheaper per pass
// than epoll_wait, which measurably adds latency to a polling loop); with
// more, one epoll_wait finds the ready ones of every kind. Sources that
// always_run() are advanced on every pass either way; before any blocking
// wait the engine calls their PrepareToSleep().
//
// A socket in an epoll set costs every packet that arrives on it a wakeup
// callback in the kernel (measured: about 0.5 us of a 5 us UDP round trip
// here), so the engine puts its sources' fds into its epoll sets only while
// something may block on them: the main set while a thread waits in
// WaitAndRun(), after fi_trywait (PrepareToSleep), for good once the fd has
// been handed to the application (KeepArmed) or while there are more than
// kPollLimit sources; it takes them out again after kBusyRuns passes of an
// application that polls without waiting. The auto-progress thread's set
// holds them only while that thread waits on it.
//
// A source that holds work back for something other than input (a message
// waiting for room in a CQ the application reads) asks for the next pass
// with RunAgain: that pass advances it whatever its fd says, and it asks
// again while it still waits. The auto thread advances such sources when
// its wait times out (every kAutoWaitMillis), so held work resumes without
// an application call, without the thread spinning meanwhile.
//
// Sources are advanced one thread at a time; Run() returns at once when
// another application thread is already running them, and waits for the
// auto thread (which may have lost its CPU in the middle of a pass). Lock order: the engine's run
// lock, then a source's own lock. So Add may be called with a source's lock
// held, but Remove, which waits for a running pass to end, must not, and
// neither may be called from inside Progress().
#ifndef FABRIC_PROVIDERS_UTIL_PROGRESS_H_
#define FABRIC_PROVIDERS_UTIL_PROGRESS_H_

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/futex_mutex.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {

class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  // Advances whatever can be advanced now, without blocking.
  virtual void Progress() = 0;
  // A pollable fd that is readable when Progress() has input to take.
  virtual int progress_fd() const = 0;
  // Whether the engine's thread advances it (FI_PROGRESS_AUTO).
  virtual bool auto_progress() const = 0;
  // Whether a pass over few sources calls Progress() without asking
  // whether its fd is ready: for sources whose own check is as cheap (a UDP
  // socket's non-blocking read, which takes no lock that arriving packets
  // need; an endpoint that polls its own sockets).
  virtual bool poll_directly() const { return false; }
  // Whether Progress() runs on every pass whatever the number of sources
  // and the fd says: a source whose input arrives in shared memory, which
  // rings its fd only for a reader that said it sleeps (PrepareToSleep).
  virtual bool always_run() const { return false; }
  // Called (for sources that always run) before the engine or an
  // application may block waiting for fds: a source whose input does not
  // always ring its fd asks its writers to ring it from now on. False when
  // input is already waiting, so the engine runs instead.
  virtual bool PrepareToSleep() { return true; }
  // Called (for sources that poll directly) when progress_fd() must signal
  // input from now on: something may block on the engine's epoll set, or
  // passes use it. A source that keeps fds of its own out of an epoll set
  // behind progress_fd() while it is polled (it costs each packet a wakeup
  // callback) puts them in; it may take them out again once armed() is
  // false and its passes show nobody blocks.
  virtual void ArmFds() {}
};

class ProgressEngine {
 public:
  static constexpr int64_t kAutoIdleMicros = 1000;

  ProgressEngine();
  ~ProgressEngine();
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Registers `source` (its fd for readability, and for writability while
  // WantWrite says so). Starts the auto-progress thread for the first
  // source that asks for it.
  void Add(ProgressSource* source);
  // After it returns, `source` is not being advanced and never will be.
  void Remove(ProgressSource* source);
  // Also wake for writability of `source`'s fd (a send backlog waits).
  void WantWrite(ProgressSource* source, bool want);
  // Has the next pass advance `source` whatever its fd says (see above).
  // Safe from inside Progress(); nothing for sources that always run.
  void RunAgain(ProgressSource* source);
  // Stop waking for `source`'s fd at all (its socket is shut down); it
  // stays registered until Remove. Safe from inside Progress().
  void Disarm(ProgressSource* source);

  // Advances every source that is ready.
  void Run();
  // Waits up to `timeout_ms` for a source's fd to be ready, then Run().
  void WaitAndRun(int timeout_ms);
  // Fills the main epoll set (unless `auto_only`), has the sources that
  // poll directly arm their fds and asks PrepareToSleep() of those that
  // always run (of the auto-progress ones only when `auto_only`); false
  // when one has input waiting. What fi_trywait asks before an application
  // blocks on a wait fd.
  bool PrepareToSleep(bool auto_only = false);

  // An epoll fd, readable while a source's fd is: what the FD wait objects
  // of CQs, EQs and counters include so that applications blocking in
  // poll/epoll wake for manual progress.
  int fd() const { return epoll_fd_; }
  // The fd (or one that includes it) was handed to the application, which
  // may block on it whenever fi_trywait says so: keep the sources in it.
  void KeepArmed();
  // Whether the main epoll set holds the sources' fds now.
  bool armed() const { return main_armed_hint_.load(std::memory_order_relaxed); }
  bool has_sources() const { return source_count_.load() > 0; }

  // True on an auto-progress thread: it wakes for new input only, so a
  // source it advances should take all there is.
  static bool InAutoThread();

 private:
  static constexpr size_t kPollLimit = 8;
  // Passes without a wait after which the main epoll set is emptied.
  static constexpr int kBusyRuns = 256;

  // A registered source and what a pass asks poll(2) about it (fd -1 once
  // disarmed); sources polled directly are not asked about.
  struct Entry {
    ProgressSource* source;
    pollfd poll;
  };

  // Copies the registry into the pass's snapshot if it changed.
  void Refresh() ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mutex_);
  // What poll(2) is asked about `source` from the next pass on.
  void SetPollEvents(ProgressSource* source, int fd, short events);
  // What the epoll sets wait for on `source`'s fd, now and when armed.
  void SetEpollEvents(ProgressSource* source, uint32_t events);
  // Puts every source's fd into the main epoll set (`auto_set`: the auto
  // ones into the auto set) or takes them out.
  void ArmLocked(bool auto_set, bool armed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mutex_);
  // Empties the main set unless something may block on it.
  void MaybeDisarmMain();
  // Advances the sources `epoll_fd` reports ready.
  void RunReady(int epoll_fd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mutex_);
  // Advances the sources poll(2) reports ready.
  void RunPolled() ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mutex_);
  // Advances the sources that asked RunAgain (only the auto-progress ones
  // when `auto_only`: the others wait for the application's passes).
  void RunAgainRequested(bool auto_only)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(run_mutex_);
  void AutoLoop();

  // Marks, for its scope, that the auto thread holds run_mutex_ (taken
  // just before); nothing on other threads.
  class AutoHoldsRun {
   public:
    explicit AutoHoldsRun(ProgressEngine* engine);
    ~AutoHoldsRun();

   private:
    ProgressEngine* engine_;
  };

  int epoll_fd_;       // every source, level-triggered
  int auto_epoll_fd_;  // auto-progress sources, edge-triggered
  FutexMutex run_mutex_;  // held while sources are advanced, and by Remove
  std::atomic<int> source_count_{0};
  Mutex registry_mutex_;  // a leaf lock
  std::vector<ProgressSource*> direct_ ABSL_GUARDED_BY(registry_mutex_);
  // Also in direct_ or polled_.
  std::vector<ProgressSource*> always_ ABSL_GUARDED_BY(registry_mutex_);
  std::vector<Entry> polled_ ABSL_GUARDED_BY(registry_mutex_);
  // RunAgain, for the next pass.
  std::vector<ProgressSource*> again_ ABSL_GUARDED_BY(registry_mutex_);
  std::atomic<bool> again_requested_{false};  // again_ is not empty
  std::atomic<uint64_t> registry_version_{0};  // bumped when they change
  // Each source's epoll events (EPOLLIN, and EPOLLOUT while WantWrite; 0
  // once disarmed), whether the sets hold the fds, and the threads blocked
  // on the main set.
  std::unordered_map<ProgressSource*, uint32_t> epoll_events_
      ABSL_GUARDED_BY(registry_mutex_);
  bool main_armed_ ABSL_GUARDED_BY(registry_mutex_) = false;
  bool auto_armed_ ABSL_GUARDED_BY(registry_mutex_) = false;
  bool keep_armed_ ABSL_GUARDED_BY(registry_mutex_) = false;
  int sleepers_ ABSL_GUARDED_BY(registry_mutex_) = 0;
  std::atomic<bool> main_armed_hint_{false};  // main_armed_, read unlocked
  std::atomic<int> busy_runs_{0};             // passes since the last wait
  // The main set was filled (or a source added to it) since the last pass:
  // the next pass has the direct sources arm their fds (ArmFds).
  std::atomic<bool> arm_pending_{false};
  // The pass's copies.
  uint64_t snapshot_version_ ABSL_GUARDED_BY(run_mutex_) = 0;
  std::vector<ProgressSource*> direct_snapshot_ ABSL_GUARDED_BY(run_mutex_);
  std::vector<ProgressSource*> always_snapshot_ ABSL_GUARDED_BY(run_mutex_);
  std::vector<pollfd> poll_snapshot_ ABSL_GUARDED_BY(run_mutex_);
  // Parallel to poll_snapshot_.
  std::vector<ProgressSource*> polled_snapshot_ ABSL_GUARDED_BY(run_mutex_);
  std::vector<ProgressSource*> again_snapshot_ ABSL_GUARDED_BY(run_mutex_);
  std::atomic<bool> auto_started_{false};  // only then are passes counted
  std::atomic<bool> auto_holds_run_{false};  // the auto thread has run_mutex_
  std::atomic<uint64_t> app_runs_{0};  // passes the application ran
  std::atomic<bool> stopping_{false};
  Mutex thread_mutex_;
  // Started by the first auto-progress source.
  std::thread auto_thread_ ABSL_GUARDED_BY(thread_mutex_);
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PROGRESS_H_

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
// application has not called Run() for kAutoIdleMicros.
//
// Sources are advanced one thread at a time; Run() returns at once when
// another thread is already running them. Lock order: the engine's run
// lock, then a source's own lock. So Add may be called with a source's lock
// held, but Remove, which waits for a running pass to end, must not, and
// neither may be called from inside Progress().
#ifndef FABRIC_PROVIDERS_UTIL_PROGRESS_H_
#define FABRIC_PROVIDERS_UTIL_PROGRESS_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

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
  // Whether each pass calls Progress() without asking epoll first: for
  // sockets whose non-blocking read is as cheap as epoll_wait and takes no
  // lock that arriving packets need (UDP; not TCP streams).
  virtual bool poll_directly() const { return false; }
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
  // Stop waking for `source`'s fd at all (its socket is shut down); it
  // stays registered until Remove. Safe from inside Progress().
  void Disarm(ProgressSource* source);

  // Advances every source that is ready.
  void Run();
  // Waits up to `timeout_ms` for a source's fd to be ready, then Run().
  void WaitAndRun(int timeout_ms);

  // An epoll fd, readable while a source's fd is: what the FD wait objects
  // of CQs, EQs and counters include so that applications blocking in
  // poll/epoll wake for manual progress.
  int fd() const { return epoll_fd_; }
  bool has_sources() const { return source_count_.load() > 0; }

  // True on an auto-progress thread: it wakes for new input only, so a
  // source it advances should take all there is.
  static bool InAutoThread();

 private:
  // Advances the sources `epoll_fd` reports ready; run_mutex_ is held.
  void RunReady(int epoll_fd);
  // Advances the sources that poll directly; run_mutex_ is held.
  void RunDirect();
  void AutoLoop();

  int epoll_fd_;       // every source, level-triggered
  int auto_epoll_fd_;  // auto-progress sources, edge-triggered
  std::mutex run_mutex_;  // held while sources are advanced, and by Remove
  std::atomic<int> source_count_{0};
  std::atomic<int> epoll_count_{0};  // sources that are not polled directly
  std::mutex direct_mutex_;          // guards direct_
  std::vector<ProgressSource*> direct_;
  std::atomic<uint64_t> direct_version_{0};  // bumped when direct_ changes
  uint64_t snapshot_version_ = 0;             // run_mutex_ guards these
  std::vector<ProgressSource*> direct_snapshot_;
  std::atomic<bool> auto_started_{false};  // only then is the time kept
  std::atomic<int64_t> last_app_run_micros_{0};
  std::atomic<bool> stopping_{false};
  std::mutex thread_mutex_;  // guards auto_thread_
  std::thread auto_thread_;  // started by the first auto-progress source
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PROGRESS_H_

#include "fabric/api/config/log_ops.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "fabric/api/config/enum_names.h"
#include "fabric/api/config/log_filter.h"
#include "fabric/api/config/param_names.h"

namespace fabric {
namespace {

using EnabledFn = decltype(fi_ops_log::enabled);
using ReadyFn = decltype(fi_ops_log::ready);
using LogFn = decltype(fi_ops_log::log);

// The library's own log functions.

int OwnEnabled(const struct fi_provider* prov, enum fi_log_level level,
               enum fi_log_subsys subsys, uint64_t flags) {
  return CurrentLogFilter().Enabled(level, subsys,
                                    (flags & FI_LOG_PROV_FILTERED) != 0);
}

uint64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int OwnReady(const struct fi_provider* prov, enum fi_log_level level,
             enum fi_log_subsys subsys, uint64_t flags, uint64_t* showtime) {
  if (!CurrentLogOps().enabled(prov, level, subsys, flags)) return 0;
  if (showtime == nullptr) return 1;
  uint64_t now = NowMs();
  if (now < *showtime) return 0;
  *showtime = now + CurrentLogFilter().interval_ms;
  return 1;
}

void OwnLog(const struct fi_provider* prov, enum fi_log_level level,
            enum fi_log_subsys subsys, const char* func, int line,
            const char* msg) {
  fprintf(stderr, "libfabric:%d:%ld::%s:%s:%s():%d<%s> %s",
          static_cast<int>(getpid()), static_cast<long>(time(nullptr)),
          ProviderNameOrCore(prov), LogSubsysName(subsys),
          func == nullptr ? "" : func, line, LogLevelName(level),
          msg == nullptr ? "" : msg);
}

// The functions in use.
std::atomic<EnabledFn> current_enabled{&OwnEnabled};
std::atomic<ReadyFn> current_ready{&OwnReady};
std::atomic<LogFn> current_log{&OwnLog};

// Serializes opening, importing and closing an import.
std::mutex& ImportMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

bool OwnOpsInUse() {
  return current_enabled.load() == &OwnEnabled &&
         current_ready.load() == &OwnReady && current_log.load() == &OwnLog;
}

// Operations a logging fid does not have.
int NoControl(struct fid*, int, void*) { return -FI_ENOSYS; }
int NoOpsOpen(struct fid*, const char*, uint64_t, void**, void*) {
  return -FI_ENOSYS;
}
int NoToStr(const struct fid*, char*, size_t) { return -FI_ENOSYS; }
int NoOpsSet(struct fid*, const char*, uint64_t, void*, void*) {
  return -FI_ENOSYS;
}
int NoBind(struct fid*, struct fid*, uint64_t) { return -FI_ENOSYS; }

// Closing an application's imported fid_logging: back to the library's own.
int CloseImport(struct fid*) {
  std::lock_guard<std::mutex> lock(ImportMutex());
  current_enabled.store(&OwnEnabled);
  current_ready.store(&OwnReady);
  current_log.store(&OwnLog);
  return 0;
}

struct fi_ops imported_fid_ops = {
    sizeof(struct fi_ops),
    &CloseImport,
    &NoBind,
    &NoControl,
    &NoOpsOpen,
    &NoToStr,
    &NoOpsSet,
};

// fi_import_fid(library's logging fid, application's fid_logging, flags).
int BindImport(struct fid*, struct fid* imported_fid, uint64_t flags) {
  if (flags != 0 || imported_fid == nullptr ||
      imported_fid->fclass != FI_CLASS_LOG) {
    return -FI_EINVAL;
  }
  // struct fid is the first member of struct fid_logging.
  auto* imported = reinterpret_cast<struct fid_logging*>(imported_fid);
  if (imported->ops == nullptr ||
      imported->ops->size < sizeof(struct fi_ops_log)) {
    return -FI_EINVAL;
  }
  std::lock_guard<std::mutex> lock(ImportMutex());
  if (imported->ops->enabled != nullptr) {
    current_enabled.store(imported->ops->enabled);
  }
  if (imported->ops->ready != nullptr)
    current_ready.store(imported->ops->ready);
  if (imported->ops->log != nullptr) current_log.store(imported->ops->log);
  imported->fid.ops = &imported_fid_ops;
  return 0;
}

int CloseLogging(struct fid*) { return 0; }

struct fi_ops logging_fid_ops = {
    sizeof(struct fi_ops),
    &CloseLogging,
    &BindImport,
    &NoControl,
    &NoOpsOpen,
    &NoToStr,
    &NoOpsSet,
};

struct fi_ops_log own_log_ops = {
    sizeof(struct fi_ops_log),
    &OwnEnabled,
    &OwnReady,
    &OwnLog,
};

// What fi_open("logging") returns: its ops are the library's own functions.
struct fid_logging logging_fid = {
    {FI_CLASS_LOG, nullptr, &logging_fid_ops},
    &own_log_ops,
};

}  // namespace

LogOps CurrentLogOps() {
  return LogOps{current_enabled.load(), current_ready.load(),
                current_log.load()};
}

int OpenLogging(uint32_t version, uint64_t flags, struct fid** fid,
                void* context) {
  if (fid == nullptr || FI_VERSION_LT(version, FI_VERSION(1, 13))) {
    return -FI_EINVAL;
  }
  if (flags != 0) return -FI_EBADFLAGS;
  std::lock_guard<std::mutex> lock(ImportMutex());
  if (!OwnOpsInUse()) return -FI_EALREADY;
  logging_fid.fid.context = context;
  *fid = &logging_fid.fid;
  return 0;
}

}  // namespace fabric

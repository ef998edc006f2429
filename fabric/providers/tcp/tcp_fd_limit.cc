#include "fabric/providers/tcp/tcp_fd_limit.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>  // std::call_once

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {
namespace tcp {
namespace {

Mutex spare_mutex;
int spare_fd ABSL_GUARDED_BY(spare_mutex) = -1;

int OpenSpare() { return open("/dev/null", O_RDONLY | O_CLOEXEC); }

void RaiseSoftLimit(const fi_provider* log) {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    FI_WARN(log, FI_LOG_CORE, "getrlimit(RLIMIT_NOFILE): %s\n",
            strerror(errno));
    return;
  }
  unsigned long long soft = limit.rlim_cur;
  unsigned long long hard = limit.rlim_max;
  if (limit.rlim_cur == limit.rlim_max) {
    FI_INFO(log, FI_LOG_CORE,
            "soft RLIMIT_NOFILE %llu is already the hard limit\n", soft);
    return;
  }
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    FI_WARN(log, FI_LOG_CORE,
            "could not raise the soft RLIMIT_NOFILE from %llu to %llu: %s\n",
            soft, hard, strerror(errno));
    return;
  }
  FI_INFO(log, FI_LOG_CORE,
          "raised the soft RLIMIT_NOFILE from %llu to the hard limit %llu\n",
          soft, hard);
}

}  // namespace

void PrepareFdBudget(const fi_provider* log) {
  static std::once_flag once;
  std::call_once(once, [log] {
    RaiseSoftLimit(log);
    MutexLock<Mutex> lock(spare_mutex);
    spare_fd = OpenSpare();
    if (spare_fd < 0) {
      FI_WARN(log, FI_LOG_CORE, "opening the spare fd: %s\n", strerror(errno));
    }
  });
}

bool IsOutOfFds(int err) { return err == EMFILE || err == ENFILE; }

std::string FdLimitText() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return "RLIMIT_NOFILE unknown";
  return absl::StrCat("soft RLIMIT_NOFILE ",
                      static_cast<unsigned long long>(limit.rlim_cur));
}

void RefuseConnection(int listen_fd, const fi_provider* log) {
  MutexLock<Mutex> lock(spare_mutex);
  if (spare_fd < 0) {
    FI_WARN(log, FI_LOG_EP_CTRL,
            "out of file descriptors (%s) and no spare fd: a connection "
            "waits on listener %d\n",
            FdLimitText().c_str(), listen_fd);
    return;
  }
  close(spare_fd);
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) close(fd);
  spare_fd = OpenSpare();
  FI_WARN(log, FI_LOG_EP_CTRL,
          "out of file descriptors (%s): refused a connection on listener "
          "%d\n",
          FdLimitText().c_str(), listen_fd);
}

}  // namespace tcp
}  // namespace fabric

#include "fabric/providers/util/log_failure.h"

#include <errno.h>

#include <string>

#include "fabric/api/core/status.h"

namespace fabric {

int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               const absl::Status& status, absl::string_view call,
               const char* func, int line) {
  if (fi_log_enabled(provider, FI_LOG_WARN, subsystem)) {
    // Logging never changes errno as the caller sees it (fi_log.h).
    const int saved_errno = errno;
    const std::string message(status.message());
    if (call.empty()) {
      fi_log(provider, FI_LOG_WARN, subsystem, func, line, "%s\n",
             message.c_str());
    } else {
      fi_log(provider, FI_LOG_WARN, subsystem, func, line, "%.*s: %s\n",
             static_cast<int>(call.size()), call.data(), message.c_str());
    }
    errno = saved_errno;
  }
  return ToFiErrno(status);
}

int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               int fi_errno, absl::string_view what, const char* func,
               int line) {
  return LogFailure(provider, subsystem, FiError(fi_errno, what), {}, func,
                    line);
}

}  // namespace fabric

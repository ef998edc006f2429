#include "fabric/providers/util/log_failure.h"

#include <string>

#include "fabric/api/core/status.h"

namespace fabric {

int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               const absl::Status& status, absl::string_view call) {
  const std::string message(status.message());
  if (call.empty()) {
    FI_WARN(provider, subsystem, "%s\n", message.c_str());
  } else {
    FI_WARN(provider, subsystem, "%.*s: %s\n", static_cast<int>(call.size()),
            call.data(), message.c_str());
  }
  return ToFiErrno(status);
}

int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               int fi_errno, absl::string_view what) {
  return LogFailure(provider, subsystem, FiError(fi_errno, what));
}

}  // namespace fabric

// File: fabric/providers/util/log_failure.h
//
// How a call that refuses its arguments or fails ends, in one place: a
// warning on the provider's log, then the negative fi_errno the C API
// returns. Objects keep one-line wrappers that name their log and
// subsystem.
//
//   if (!status.ok()) return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
//   return LogFailure(log, FI_LOG_EP_DATA, FI_EINVAL, "a NULL buffer");
#ifndef FABRIC_PROVIDERS_UTIL_LOG_FAILURE_H_
#define FABRIC_PROVIDERS_UTIL_LOG_FAILURE_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fabric {

// Logs `status`'s message (prefixed with `call` and ": " when `call` is not
// empty) as a warning of `subsystem` on `provider`'s log; returns its
// negative fi_errno (status.h). The log line names the caller's function
// and line, as FI_WARN there would (`func` and `line` are filled in).
int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               const absl::Status& status, absl::string_view call = {},
               const char* func = __builtin_FUNCTION(),
               int line = __builtin_LINE());

// The same for fi_errno `fi_errno` (positive) and the message `what`.
int LogFailure(const fi_provider* provider, fi_log_subsys subsystem,
               int fi_errno, absl::string_view what,
               const char* func = __builtin_FUNCTION(),
               int line = __builtin_LINE());

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_LOG_FAILURE_H_

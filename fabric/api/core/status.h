// File: fabric/api/core/status.h
//
// Errors inside the library travel as absl::Status; the C boundary turns them
// into one negative fi_errno. A status made by FiError carries its exact
// fi_errno; other statuses map by canonical code.
//
//   absl::Status s = FiError(FI_EINVAL, "node and service are both NULL");
//   return ToFiErrno(s);   // -FI_EINVAL
#ifndef FABRIC_API_CORE_STATUS_H_
#define FABRIC_API_CORE_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fabric {

// A status with `fi_errno` (positive FI_E* value) attached.
absl::Status FiError(int fi_errno, absl::string_view message);

// The negative fi_errno for `status` (0 for OK).
int ToFiErrno(const absl::Status& status);

}  // namespace fabric

// Returns early from the enclosing function when `expr` is not OK.
#define FABRIC_RETURN_IF_ERROR(expr)            \
  do {                                          \
    absl::Status fabric_status_ = (expr);       \
    if (!fabric_status_.ok()) return fabric_status_; \
  } while (0)

#endif  // FABRIC_API_CORE_STATUS_H_

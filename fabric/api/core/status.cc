#include "fabric/api/core/status.h"

#include <rdma/fi_errno.h>

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"

namespace fabric {
namespace {

constexpr char kFiErrnoPayload[] = "fabric.fi_errno";

absl::StatusCode CodeFor(int fi_errno) {
  switch (fi_errno) {
    case FI_EINVAL:
    case FI_EBADFLAGS:
      return absl::StatusCode::kInvalidArgument;
    case FI_ENODATA:
    case FI_ENOENT:
      return absl::StatusCode::kNotFound;
    case FI_ENOSYS:
    case FI_EOPNOTSUPP:
      return absl::StatusCode::kUnimplemented;
    case FI_ENOMEM:
      return absl::StatusCode::kResourceExhausted;
    case FI_EBUSY:
      return absl::StatusCode::kFailedPrecondition;
    case FI_EAGAIN:
      return absl::StatusCode::kUnavailable;
    case FI_ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      return absl::StatusCode::kUnknown;
  }
}

int ErrnoFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 0;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return FI_EINVAL;
    case absl::StatusCode::kNotFound:
      return FI_ENODATA;
    case absl::StatusCode::kUnimplemented:
      return FI_ENOSYS;
    case absl::StatusCode::kResourceExhausted:
      return FI_ENOMEM;
    case absl::StatusCode::kFailedPrecondition:
      return FI_EBUSY;
    case absl::StatusCode::kUnavailable:
      return FI_EAGAIN;
    case absl::StatusCode::kAlreadyExists:
      return FI_EALREADY;
    case absl::StatusCode::kPermissionDenied:
      return FI_EACCES;
    case absl::StatusCode::kDeadlineExceeded:
      return FI_ETIMEDOUT;
    default:
      return FI_EOTHER;
  }
}

}  // namespace

absl::Status FiError(int fi_errno, absl::string_view message) {
  absl::Status status(CodeFor(fi_errno), message);
  status.SetPayload(kFiErrnoPayload, absl::Cord(std::to_string(fi_errno)));
  return status;
}

int ToFiErrno(const absl::Status& status) {
  if (status.ok()) return 0;
  absl::optional<absl::Cord> payload = status.GetPayload(kFiErrnoPayload);
  int fi_errno = 0;
  if (payload.has_value() &&
      absl::SimpleAtoi(std::string(*payload), &fi_errno) && fi_errno > 0) {
    return -fi_errno;
  }
  return -ErrnoFor(status.code());
}

}  // namespace fabric

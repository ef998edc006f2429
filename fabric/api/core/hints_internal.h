// File: fabric/api/core/hints_internal.h
//
// What the two halves of the hints' rules share (hints.cc: matching a
// candidate; hints_validate.cc: the hints on their own): how an unmet
// request is reported, and values named as fi_tostr names them.
#ifndef FABRIC_API_CORE_HINTS_INTERNAL_H_
#define FABRIC_API_CORE_HINTS_INTERNAL_H_

#include <rdma/fabric.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fabric {
namespace hints_internal {

// fi_tostr's text of `value` of `type` ("?" when it has none).
std::string TypeName(const void* value, fi_type type);
std::string CapsName(uint64_t caps);

// A request no provider can meet: -FI_ENODATA with `what`.
absl::Status Unmet(absl::string_view what);

}  // namespace hints_internal
}  // namespace fabric

#endif  // FABRIC_API_CORE_HINTS_INTERNAL_H_

// File: fabric/api/config/param_value.h
//
// How fi_param_get reads a parameter's text, by type. libfabric's own rules,
// made strict: a value with anything left over is an error instead of a
// silent 0.
//
//   FI_PARAM_INT     a C integer literal: "42", "-1", "0x40" (strtol, base 0)
//   FI_PARAM_SIZE_T  likewise, not negative
//   FI_PARAM_BOOL    0/1, yes/no, true/false, on/off, in any case
//   FI_PARAM_STRING  the text as it is
//
// Surrounding blanks are ignored for numbers and booleans.
//
//   absl::StatusOr<bool> on = ParseBoolParam("Yes");  // true
//   ParseIntParam("12abc").status();                   // kInvalidArgument
#ifndef FABRIC_API_CONFIG_PARAM_VALUE_H_
#define FABRIC_API_CONFIG_PARAM_VALUE_H_

#include <rdma/fabric.h>
#include <stddef.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fabric {

absl::StatusOr<int> ParseIntParam(absl::string_view text);
absl::StatusOr<size_t> ParseSizeParam(absl::string_view text);
absl::StatusOr<bool> ParseBoolParam(absl::string_view text);

// OK when `text` is a valid value of `type`.
absl::Status CheckParamValue(enum fi_param_type type, absl::string_view text);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_PARAM_VALUE_H_

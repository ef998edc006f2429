// File: fabric/api/config/enum_names.h
//
// The names settings use for the C API's enums: log levels and subsystems as
// FI_LOG_LEVEL and FI_LOG_SUBSYS spell them ("warn", "ep_data"), threading
// and progress models as fi_tostr prints them ("FI_THREAD_DOMAIN"). Parsing
// ignores case.
//
//   ParseLogLevel("INFO");                // FI_LOG_INFO
//   LogSubsysName(FI_LOG_EP_DATA);        // "ep_data"
//   ParseThreading("fi_thread_domain");   // FI_THREAD_DOMAIN
#ifndef FABRIC_API_CONFIG_ENUM_NAMES_H_
#define FABRIC_API_CONFIG_ENUM_NAMES_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>

#include <optional>

#include "absl/strings/string_view.h"

namespace fabric {

// "warn", "trace", "info", "debug"; "Unknown" out of range.
const char* LogLevelName(int level);
std::optional<enum fi_log_level> ParseLogLevel(absl::string_view name);

// "core", "fabric", "domain", "ep_ctrl", "ep_data", "av", "cq", "eq", "mr",
// "cntr"; "Unknown" out of range.
const char* LogSubsysName(int subsys);
std::optional<enum fi_log_subsys> ParseLogSubsys(absl::string_view name);

// FI_THREAD_SAFE .. FI_THREAD_ENDPOINT (not FI_THREAD_UNSPEC).
std::optional<enum fi_threading> ParseThreading(absl::string_view name);

// FI_PROGRESS_AUTO or FI_PROGRESS_MANUAL (not FI_PROGRESS_UNSPEC).
std::optional<enum fi_progress> ParseProgress(absl::string_view name);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_ENUM_NAMES_H_

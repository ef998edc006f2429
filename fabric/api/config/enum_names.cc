#include "fabric/api/config/enum_names.h"

#include <utility>

#include "absl/strings/match.h"

namespace fabric {
namespace {

// Indexed by enum fi_log_level and enum fi_log_subsys.
constexpr const char* kLogLevelNames[] = {"warn", "trace", "info", "debug"};
static_assert(FI_LOG_WARN == 0 && FI_LOG_DEBUG == 3 && FI_LOG_MAX == 4);

constexpr const char* kLogSubsysNames[] = {
    "core", "fabric", "domain", "ep_ctrl", "ep_data",
    "av",   "cq",     "eq",     "mr",      "cntr",
};
static_assert(FI_LOG_CORE == 0 && FI_LOG_EP_DATA == 4 && FI_LOG_CNTR == 9 &&
              FI_LOG_SUBSYS_MAX == 10);

constexpr std::pair<const char*, enum fi_threading> kThreadings[] = {
    {"FI_THREAD_SAFE", FI_THREAD_SAFE},
    {"FI_THREAD_FID", FI_THREAD_FID},
    {"FI_THREAD_DOMAIN", FI_THREAD_DOMAIN},
    {"FI_THREAD_COMPLETION", FI_THREAD_COMPLETION},
    {"FI_THREAD_ENDPOINT", FI_THREAD_ENDPOINT},
};

constexpr std::pair<const char*, enum fi_progress> kProgresses[] = {
    {"FI_PROGRESS_AUTO", FI_PROGRESS_AUTO},
    {"FI_PROGRESS_MANUAL", FI_PROGRESS_MANUAL},
};

template <typename Enum, size_t N>
std::optional<Enum> FindByName(const std::pair<const char*, Enum> (&table)[N],
                               absl::string_view name) {
  for (const auto& [entry_name, value] : table) {
    if (absl::EqualsIgnoreCase(entry_name, name)) return value;
  }
  return std::nullopt;
}

}  // namespace

const char* LogLevelName(int level) {
  if (level < 0 || level >= FI_LOG_MAX) return "Unknown";
  return kLogLevelNames[level];
}

std::optional<enum fi_log_level> ParseLogLevel(absl::string_view name) {
  for (int level = 0; level < FI_LOG_MAX; ++level) {
    if (absl::EqualsIgnoreCase(kLogLevelNames[level], name)) {
      return static_cast<enum fi_log_level>(level);
    }
  }
  return std::nullopt;
}

const char* LogSubsysName(int subsys) {
  if (subsys < 0 || subsys >= FI_LOG_SUBSYS_MAX) return "Unknown";
  return kLogSubsysNames[subsys];
}

std::optional<enum fi_log_subsys> ParseLogSubsys(absl::string_view name) {
  for (int subsys = 0; subsys < FI_LOG_SUBSYS_MAX; ++subsys) {
    if (absl::EqualsIgnoreCase(kLogSubsysNames[subsys], name)) {
      return static_cast<enum fi_log_subsys>(subsys);
    }
  }
  return std::nullopt;
}

std::optional<enum fi_threading> ParseThreading(absl::string_view name) {
  return FindByName(kThreadings, name);
}

std::optional<enum fi_progress> ParseProgress(absl::string_view name) {
  return FindByName(kProgresses, name);
}

}  // namespace fabric

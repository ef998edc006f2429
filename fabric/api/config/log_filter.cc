#include "fabric/api/config/log_filter.h"

#include <rdma/providers/fi_log.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/enum_names.h"
#include "fabric/api/config/loaded_config.h"
#include "fabric/api/config/log.h"
#include "fabric/api/config/param_names.h"
#include "fabric/api/config/param_value.h"

namespace fabric {
namespace {

SettingValue CoreSetting(const char* param) {
  return LookupSetting(ParamEnvName(kCoreProviderName, param));
}

std::string Described(const char* param, const SettingValue& setting) {
  return absl::StrCat(ParamEnvName(kCoreProviderName, param), "=",
                      setting.value, " (from ", SourceOf(setting), ")");
}

// The filter the settings ask for; what does not make sense is added to
// `warnings`.
LogFilter MakeLogFilter(std::vector<std::string>* warnings) {
  LogFilter filter;
  SettingValue level = CoreSetting(kLogLevelParam);
  if (level.value != nullptr) {
    std::optional<enum fi_log_level> parsed = ParseLogLevel(level.value);
    if (!parsed.has_value()) {
      warnings->push_back(absl::StrCat(Described(kLogLevelParam, level),
                                       ": unknown level; logging warnings"));
    }
    filter.max_level = parsed.value_or(FI_LOG_WARN);
  }

  SettingValue subsystems = CoreSetting(kLogSubsysParam);
  NameFilter subsys_filter =
      NameFilter::Parse(subsystems.value == nullptr ? "" : subsystems.value);
  for (const std::string& name : subsys_filter.names()) {
    if (!ParseLogSubsys(name).has_value()) {
      warnings->push_back(absl::StrCat(Described(kLogSubsysParam, subsystems),
                                       ": unknown subsystem '", name, "'"));
    }
  }
  for (int subsys = 0; subsys < FI_LOG_SUBSYS_MAX; ++subsys) {
    if (subsys_filter.Allows(LogSubsysName(subsys))) {
      filter.subsystems |= 1u << subsys;
    }
  }

  SettingValue providers = CoreSetting(kLogProvParam);
  if (providers.value != nullptr) {
    filter.providers = NameFilter::Parse(providers.value);
  }

  SettingValue interval = CoreSetting(kLogIntervalParam);
  if (interval.value != nullptr) {
    absl::StatusOr<int> ms = ParseIntParam(interval.value);
    if (ms.ok() && *ms >= 0) {
      filter.interval_ms = static_cast<uint64_t>(*ms);
    } else {
      warnings->push_back(absl::StrCat(Described(kLogIntervalParam, interval),
                                       ": not a number of milliseconds; using ",
                                       filter.interval_ms));
    }
  }
  return filter;
}

struct FilterState {
  std::mutex mu;
  std::atomic<const LogFilter*> current{nullptr};
  // Every filter made, kept so that references handed out stay valid.
  std::vector<std::unique_ptr<const LogFilter>> all;
};

FilterState& State() {
  static FilterState* state = new FilterState;
  return *state;
}

}  // namespace

bool LogFilter::Enabled(int level, int subsys, bool provider_filtered) const {
  if (provider_filtered || level < 0 || level > max_level) return false;
  if (subsys < 0 || subsys >= FI_LOG_SUBSYS_MAX) return false;
  return (subsystems & (1u << subsys)) != 0;
}

bool LogFilter::FiltersOut(const struct fi_provider* provider) const {
  const char* name = ProviderNameOrCore(provider);
  if (absl::string_view(name) == kCoreProviderName) return false;
  return !providers.Allows(name);
}

const LogFilter& CurrentLogFilter() {
  FilterState& state = State();
  const LogFilter* filter = state.current.load(std::memory_order_acquire);
  if (filter != nullptr) return *filter;
  std::vector<std::string> warnings;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    filter = state.current.load(std::memory_order_acquire);
    if (filter == nullptr) {
      state.all.push_back(
          std::make_unique<const LogFilter>(MakeLogFilter(&warnings)));
      filter = state.all.back().get();
      state.current.store(filter, std::memory_order_release);
    }
  }
  for (const std::string& warning : warnings) {
    FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "%s\n", warning.c_str());
  }
  return *filter;
}

void ResetLogFilterForTesting() {
  FilterState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.current.store(nullptr, std::memory_order_release);
}

}  // namespace fabric

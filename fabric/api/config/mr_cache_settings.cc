#include "fabric/api/config/mr_cache_settings.h"

#include <rdma/providers/fi_log.h>
#include <unistd.h>

#include "absl/status/statusor.h"
#include "fabric/api/config/loaded_config.h"
#include "fabric/api/config/param_names.h"
#include "fabric/api/config/param_value.h"

namespace fabric {
namespace {

// The setting of core parameter `param`, or null.
const char* Setting(const char* param) {
  return LookupSetting(ParamEnvName(kCoreProviderName, param)).value;
}

size_t SizeSetting(const char* param, size_t fallback) {
  const char* value = Setting(param);
  if (value == nullptr) return fallback;
  absl::StatusOr<size_t> parsed = ParseSizeParam(value);
  if (parsed.ok()) return *parsed;
  FI_WARN(nullptr, FI_LOG_MR, "%s=%s: not a size; using %zu\n",
          ParamEnvName(kCoreProviderName, param).c_str(), value, fallback);
  return fallback;
}

size_t DefaultMaxSize() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (pages <= 0 || page <= 0 || cores <= 0) return size_t{1} << 30;
  return static_cast<size_t>(pages) * static_cast<size_t>(page) /
         static_cast<size_t>(cores) / 2;
}

}  // namespace

MrCacheSettings CurrentMrCacheSettings() {
  MrCacheSettings settings;
  settings.max_size = SizeSetting(kMrCacheMaxSizeParam, DefaultMaxSize());
  settings.max_count = SizeSetting(kMrCacheMaxCountParam, settings.max_count);
  if (const char* monitor = Setting(kMrCacheMonitorParam)) {
    std::string wanted = monitor;
    if (wanted == "userfaultfd" || wanted == "disabled") {
      settings.monitor = wanted;
    } else {
      FI_WARN(nullptr, FI_LOG_MR,
              "FI_MR_CACHE_MONITOR=%s: unknown monitor (userfaultfd or "
              "disabled); using %s\n",
              monitor, settings.monitor.c_str());
    }
  }
  return settings;
}

}  // namespace fabric

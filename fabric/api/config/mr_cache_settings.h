// File: fabric/api/config/mr_cache_settings.h
//
// The settings of the registration cache (config.proto's MrCache): each
// from the environment (FI_MR_CACHE_MAX_SIZE, FI_MR_CACHE_MAX_COUNT,
// FI_MR_CACHE_MONITOR), else the configuration file, else the default. A
// malformed value is logged at warning level and the default used.
#ifndef FABRIC_API_CONFIG_MR_CACHE_SETTINGS_H_
#define FABRIC_API_CONFIG_MR_CACHE_SETTINGS_H_

#include <cstddef>
#include <string>

namespace fabric {

struct MrCacheSettings {
  // Bytes of unused registrations kept (default: memory / cores / 2).
  size_t max_size = 0;
  // Unused registrations kept; 0 disables caching (default 1024).
  size_t max_count = 1024;
  // "userfaultfd" (default) or "disabled".
  std::string monitor = "userfaultfd";
};

MrCacheSettings CurrentMrCacheSettings();

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_MR_CACHE_SETTINGS_H_

// File: fabric/api/config/loaded_config.h
//
// The configuration file of this process, read once, and the current value
// of each setting with where it comes from: the environment first, then the
// file.
//
//   SettingValue level = LookupSetting("FI_LOG_LEVEL");
//   if (level.value != nullptr) ...  // "warn"
//   SourceOf(level);  // "environment", "/etc/fabric/fabric.conf:3", ...
#ifndef FABRIC_API_CONFIG_LOADED_CONFIG_H_
#define FABRIC_API_CONFIG_LOADED_CONFIG_H_

#include <string>

#include "fabric/api/config/config_file.h"

namespace fabric {

// Read when FI_CONFIG is not set, and only if it exists.
inline constexpr char kDefaultConfigPath[] = "/etc/fabric/fabric.conf";

// The file named by FI_CONFIG (which must exist; an empty FI_CONFIG names no
// file), else kDefaultConfigPath when it exists, else an empty
// configuration. Read on first use, once, thread-safe; its errors are left
// for EnsureConfigLoaded (settings.h) to report. Valid for the life of the
// process.
const ConfigFile& LoadedConfigFile();

// A setting's current value.
struct SettingValue {
  // From the environment, else from the file; null when neither sets it.
  // Valid until the environment variable changes.
  const char* value = nullptr;
  bool from_environment = false;
  // What the file sets, also when the environment overrides it; or null.
  const FileSetting* in_file = nullptr;
};

// The value of the setting whose environment variable is `env_name`.
SettingValue LookupSetting(const std::string& env_name);

// Where `value` comes from: "environment", "environment, overriding
// /etc/fabric/fabric.conf:12", "/etc/fabric/fabric.conf:12" or "default".
std::string SourceOf(const SettingValue& value);

// Tests only: forgets the file read, so that the next use reads it again,
// with `default_path` in place of kDefaultConfigPath. Earlier results stay
// valid.
void ResetLoadedConfigForTesting(const std::string& default_path);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_LOADED_CONFIG_H_

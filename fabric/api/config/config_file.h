// File: fabric/api/config/config_file.h
//
// Reading a configuration file (fabric.config.Config in text format, see
// config.proto) into the settings it makes: each value keyed by the
// environment variable of the fi_param it sets, with the place it was
// written. Everything that can be checked without knowing the providers is
// checked here; the provider names and provider parameters the file uses are
// listed for the caller to check against the providers compiled in.
//
//   ConfigFile file = ParseConfigText(
//       "logging { level: \"info\" }\n"
//       "provider { name: \"tcp\" param { name: \"iface\" value: \"lo\" } }\n",
//       "/etc/fabric/fabric.conf");
//   file.settings.at("FI_LOG_LEVEL").value;  // "info"
//   file.settings.at("FI_TCP_IFACE").where;  // "/etc/fabric/fabric.conf:2"
//
// A file with any error is used not at all: its settings and lists are
// empty and `errors` says what is wrong, each as "file:line:column: what".
#ifndef FABRIC_API_CONFIG_CONFIG_FILE_H_
#define FABRIC_API_CONFIG_CONFIG_FILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fabric {

// One value the file sets.
struct FileSetting {
  std::string value;  // as the environment variable would hold it
  std::string where;  // "file:line"
};

// A provider name the file uses (Provider.name, or one in the list of
// enabled_providers or logging.providers).
struct ProviderNameUse {
  std::string name;
  std::string where;  // "file:line:column"
};

// A provider's own parameter the file sets (Provider.param).
struct ProviderParamUse {
  std::string provider;
  std::string param;
  std::string env_name;     // its key in ConfigFile::settings
  std::string name_where;   // "file:line:column" of Param.name
  std::string value_where;  // "file:line:column" of Param.value
};

struct ConfigFile {
  // The file read; empty when there was none.
  std::string path;
  // By environment variable name: "FI_PROVIDER", "FI_LOG_LEVEL",
  // "FI_TCP_PRIORITY", "FI_TCP_IFACE", "FI_TCP_ATTR_TX_SIZE", ...
  std::map<std::string, FileSetting> settings;
  std::vector<ProviderNameUse> provider_names;
  std::vector<ProviderParamUse> provider_params;
  // What is wrong with the file, one message each.
  std::vector<std::string> errors;
};

// The most a config file may hold (an annotated one is a few KiB).
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{1} << 20;

// Reads the file at `path`. A missing file is an error when `must_exist`,
// otherwise an empty configuration (with an empty path). Only a regular
// file of at most kMaxConfigFileBytes is read: anything else (a device
// such as /dev/zero, a pipe, a directory, a larger file) is an error,
// found without reading it.
ConfigFile ReadConfigFile(const std::string& path, bool must_exist);

// Parses `text` as the contents of the file `path`.
ConfigFile ParseConfigText(absl::string_view text, const std::string& path);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_CONFIG_FILE_H_

#include "fabric/api/config/loaded_config.h"

#include <stdlib.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/param_names.h"

namespace fabric {
namespace {

struct LoadState {
  std::mutex mu;
  std::string default_path = kDefaultConfigPath;
  // The file in use; null until first use.
  const ConfigFile* current = nullptr;
  // Every file read, kept so that references handed out stay valid.
  std::vector<std::unique_ptr<const ConfigFile>> all;
};

LoadState& State() {
  static LoadState* state = new LoadState;
  return *state;
}

ConfigFile ReadProcessConfigFile(const std::string& default_path) {
  const char* named =
      getenv(ParamEnvName(kCoreProviderName, kConfigParam).c_str());
  if (named == nullptr) return ReadConfigFile(default_path, false);
  if (*named == '\0') return ConfigFile();
  return ReadConfigFile(named, true);
}

}  // namespace

const ConfigFile& LoadedConfigFile() {
  LoadState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  if (state.current == nullptr) {
    state.all.push_back(std::make_unique<const ConfigFile>(
        ReadProcessConfigFile(state.default_path)));
    state.current = state.all.back().get();
  }
  return *state.current;
}

SettingValue LookupSetting(const std::string& env_name) {
  SettingValue result;
  const ConfigFile& file = LoadedConfigFile();
  auto it = file.settings.find(env_name);
  if (it != file.settings.end()) {
    result.in_file = &it->second;
    result.value = it->second.value.c_str();
  }
  if (const char* env = getenv(env_name.c_str()); env != nullptr) {
    result.value = env;
    result.from_environment = true;
  }
  return result;
}

std::string SourceOf(const SettingValue& value) {
  if (value.from_environment && value.in_file != nullptr) {
    return absl::StrCat("environment, overriding ", value.in_file->where);
  }
  if (value.from_environment) return "environment";
  if (value.in_file != nullptr) return value.in_file->where;
  return "default";
}

void ResetLoadedConfigForTesting(const std::string& default_path) {
  LoadState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.default_path = default_path;
  state.current = nullptr;
}

}  // namespace fabric

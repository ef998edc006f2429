#include "fabric/api/config/param_registry.h"

#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/param_names.h"

namespace fabric {
namespace {

struct CoreParam {
  const char* name;
  enum fi_param_type type;
  const char* help;
};

// The core's parameters, with libfabric's help texts where libfabric has
// them (fi_info -e shows them).
constexpr CoreParam kCoreParams[] = {
    {kLogIntervalParam, FI_PARAM_INT,
     "Delay in ms between rate limited log messages (default 2000)"},
    {kLogLevelParam, FI_PARAM_STRING,
     "Specify logging level: warn, trace, info, debug (default: warn)"},
    {kLogProvParam, FI_PARAM_STRING,
     "Specify specific provider to log (default: all)"},
    {kLogSubsysParam, FI_PARAM_STRING,
     "Specify specific subsystem to log (default: all)"},
    {kProviderParam, FI_PARAM_STRING,
     "Only use specified provider (default: all available)"},
    {kConfigParam, FI_PARAM_STRING,
     "Configuration file, a fabric.config.Config in protobuf text format; "
     "empty for none (default: /etc/fabric/fabric.conf if it exists)"},
    {kMrCacheMaxSizeParam, FI_PARAM_SIZE_T,
     "Defines the total number of bytes for all memory regions that may be "
     "tracked by the MR cache. Setting this will reduce the amount of "
     "memory not actively in use that may be registered. (default: total "
     "memory / number of cpu cores / 2)"},
    {kMrCacheMaxCountParam, FI_PARAM_SIZE_T,
     "Defines the total number of memory regions that may be stored in the "
     "cache. Setting this will reduce the number of registered regions, "
     "regardless of their size, stored in the cache. Setting this to zero "
     "will disable MR caching. (default: 1024)"},
    {kMrCacheMonitorParam, FI_PARAM_STRING,
     "Define a default memory registration monitor. The monitor checks for "
     "virtual to physical memory address changes. Options are: userfaultfd "
     "and disabled. (default: userfaultfd)"},
};

class Registry {
 public:
  Registry() {
    for (const CoreParam& param : kCoreParams) {
      params_.push_back(MakeDefinition(kCoreProviderName, param.name,
                                       param.type, param.help));
    }
  }

  absl::Status Define(absl::string_view provider, absl::string_view name,
                      enum fi_param_type type, absl::string_view help) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const ParamDefinition* existing = Find(provider, name)) {
      if (existing->type == type) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", existing->env_name,
                       " is already defined with another type"));
    }
    params_.push_back(MakeDefinition(provider, name, type, help));
    return absl::OkStatus();
  }

  std::optional<ParamDefinition> Lookup(absl::string_view provider,
                                        absl::string_view name) {
    std::lock_guard<std::mutex> lock(mu_);
    const ParamDefinition* param = Find(provider, name);
    if (param == nullptr) return std::nullopt;
    return *param;
  }

  std::vector<std::string> NamesOf(absl::string_view provider) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> names;
    for (const ParamDefinition& param : params_) {
      if (param.provider == provider) names.push_back(param.name);
    }
    return names;
  }

  std::vector<ParamDefinition> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return params_;
  }

 private:
  static ParamDefinition MakeDefinition(absl::string_view provider,
                                        absl::string_view name,
                                        enum fi_param_type type,
                                        absl::string_view help) {
    ParamDefinition param;
    param.provider = std::string(provider);
    param.name = std::string(name);
    param.type = type;
    param.help = provider == kCoreProviderName
                     ? std::string(help)
                     : absl::StrCat(provider, ": ", help);
    param.env_name = ParamEnvName(provider, name);
    return param;
  }

  const ParamDefinition* Find(absl::string_view provider,
                              absl::string_view name) const {
    for (const ParamDefinition& param : params_) {
      if (param.provider == provider && param.name == name) return &param;
    }
    return nullptr;
  }

  std::mutex mu_;
  std::vector<ParamDefinition> params_;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

absl::Status DefineParam(absl::string_view provider, absl::string_view name,
                         enum fi_param_type type, absl::string_view help) {
  if (name.empty() || help.empty()) {
    return absl::InvalidArgumentError(
        "a parameter needs a name and a help text");
  }
  if (type != FI_PARAM_STRING && type != FI_PARAM_INT &&
      type != FI_PARAM_BOOL && type != FI_PARAM_SIZE_T) {
    return absl::InvalidArgumentError(
        absl::StrCat("parameter ", name, ": unknown type ", type));
  }
  return GetRegistry().Define(provider, name, type, help);
}

std::optional<ParamDefinition> FindParam(absl::string_view provider,
                                         absl::string_view name) {
  return GetRegistry().Lookup(provider, name);
}

std::vector<std::string> ParamNamesOf(absl::string_view provider) {
  return GetRegistry().NamesOf(provider);
}

std::vector<ParamDefinition> AllParams() { return GetRegistry().All(); }

}  // namespace fabric

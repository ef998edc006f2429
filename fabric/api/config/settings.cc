#include "fabric/api/config/settings.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fabric/api/config/config_file.h"
#include "fabric/api/config/enum_names.h"
#include "fabric/api/config/log.h"
#include "fabric/api/config/log_filter.h"
#include "fabric/api/config/name_filter.h"
#include "fabric/api/config/param_names.h"
#include "fabric/api/config/param_registry.h"
#include "fabric/api/config/param_value.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

struct ProviderSetting {
  const char* param;
  enum fi_param_type type;
  const char* help;
};

// The parameters every provider has besides its own (config.proto's
// Provider.priority and Provider.attrs).
constexpr ProviderSetting kProviderSettings[] = {
    {kPriorityParam, FI_PARAM_INT,
     "Order among providers in fi_getinfo's results, higher first "
     "(default: built in)"},
    {kAttrTxSizeParam, FI_PARAM_SIZE_T,
     "Default fi_tx_attr.size (default: built in)"},
    {kAttrRxSizeParam, FI_PARAM_SIZE_T,
     "Default fi_rx_attr.size (default: built in)"},
    {kAttrMaxMsgSizeParam, FI_PARAM_SIZE_T,
     "Default fi_ep_attr.max_msg_size (default: built in)"},
    {kAttrInjectSizeParam, FI_PARAM_SIZE_T,
     "Default fi_tx_attr.inject_size (default: built in)"},
    {kAttrThreadingParam, FI_PARAM_STRING,
     "Default fi_domain_attr.threading: FI_THREAD_SAFE, FI_THREAD_FID, "
     "FI_THREAD_DOMAIN, FI_THREAD_COMPLETION or FI_THREAD_ENDPOINT "
     "(default: built in)"},
    {kAttrControlProgressParam, FI_PARAM_STRING,
     "Default fi_domain_attr.control_progress: FI_PROGRESS_AUTO or "
     "FI_PROGRESS_MANUAL (default: built in)"},
    {kAttrDataProgressParam, FI_PARAM_STRING,
     "Default fi_domain_attr.data_progress: FI_PROGRESS_AUTO or "
     "FI_PROGRESS_MANUAL (default: built in)"},
};

void DefineProviderSettings(absl::string_view prov_name) {
  for (const ProviderSetting& setting : kProviderSettings) {
    absl::Status defined =
        DefineParam(prov_name, setting.param, setting.type, setting.help);
    if (!defined.ok()) {
      FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "%s\n",
                      std::string(defined.message()).c_str());
    }
  }
}

// "FI_TCP_X=value (from environment)".
std::string Described(const std::string& env_name,
                      const SettingValue& setting) {
  return absl::StrCat(env_name, "=", setting.value, " (from ",
                      SourceOf(setting), ")");
}

std::atomic<ProviderCatalog> catalog{nullptr};

// The catalog's spelling of `name`, if it lists it.
std::optional<std::string> KnownProvider(
    const std::vector<std::string>& providers, absl::string_view name) {
  for (const std::string& provider : providers) {
    if (absl::EqualsIgnoreCase(provider, name)) return provider;
  }
  return std::nullopt;
}

// The checks of the file that need the providers: the names it uses and
// the parameters it sets.
void CheckProviderUses(const ConfigFile& file,
                       const std::vector<std::string>& providers,
                       std::vector<std::string>* errors) {
  std::string known = absl::StrJoin(providers, ", ");
  for (const ProviderNameUse& use : file.provider_names) {
    if (!KnownProvider(providers, use.name).has_value()) {
      errors->push_back(absl::StrCat(use.where, ": unknown provider '",
                                     use.name, "' (providers: ", known, ")"));
    }
  }
  for (const ProviderParamUse& use : file.provider_params) {
    std::optional<std::string> provider =
        KnownProvider(providers, use.provider);
    if (!provider.has_value()) continue;  // reported above
    std::optional<ParamDefinition> param = FindParam(*provider, use.param);
    if (!param.has_value()) {
      errors->push_back(
          absl::StrCat(use.name_where, ": provider '", *provider,
                       "' has no parameter '", use.param, "' (its parameters: ",
                       absl::StrJoin(ParamNamesOf(*provider), ", "), ")"));
      continue;
    }
    const std::string& value = file.settings.at(use.env_name).value;
    absl::Status valid = CheckParamValue(param->type, value);
    if (!valid.ok()) {
      errors->push_back(absl::StrCat(use.value_where, ": ", param->env_name,
                                     ": ", valid.message()));
    }
  }
}

// libfabric's warning for names in FI_PROVIDER and FI_LOG_PROV that name no
// provider.
void WarnUnknownProviders(const char* param,
                          const std::vector<std::string>& providers,
                          std::vector<std::string>* warnings) {
  std::string env_name = ParamEnvName(kCoreProviderName, param);
  SettingValue setting = LookupSetting(env_name);
  if (!setting.from_environment) return;
  if (absl::StripAsciiWhitespace(setting.value).empty()) {
    warnings->push_back(absl::StrCat(env_name, " is set but empty: treated "
                                               "as unset (every provider)"));
    return;
  }
  NameFilter names = NameFilter::Parse(setting.value);
  for (const std::string& name : names.names()) {
    if (!KnownProvider(providers, name).has_value()) {
      warnings->push_back(absl::StrCat(
          "provider ", name, " is unknown, misspelled or DL provider?"));
    }
  }
}

// The result of EnsureConfigLoaded, computed once.
struct CheckState {
  std::mutex mu;
  std::optional<absl::Status> result;
};

CheckState& State() {
  static CheckState* state = new CheckState;
  return *state;
}

// Checks the configuration; each problem is added to `messages`.
absl::Status CheckConfig(std::vector<std::string>* messages) {
  const ConfigFile& file = LoadedConfigFile();
  std::vector<std::string> errors = file.errors;
  if (ProviderCatalog list_providers = catalog.load()) {
    std::vector<std::string> providers = list_providers();
    for (const std::string& provider : providers) {
      DefineProviderSettings(provider);
    }
    CheckProviderUses(file, providers, &errors);
    WarnUnknownProviders(kProviderParam, providers, messages);
    WarnUnknownProviders(kLogProvParam, providers, messages);
  }
  messages->insert(messages->end(), errors.begin(), errors.end());
  if (errors.empty()) return absl::OkStatus();
  return FiError(FI_EINVAL, absl::StrCat("invalid configuration: ",
                                         absl::StrJoin(errors, "; ")));
}

// Reads `param` of `prov_name` with `parse` into *out, which stays as it is
// when the setting is not set; FI_EINVAL when it is malformed.
template <typename T, typename Parse>
absl::Status ReadSetting(absl::string_view prov_name, const char* param,
                         Parse parse, std::optional<T>* out) {
  std::string env_name = ParamEnvName(prov_name, param);
  SettingValue setting = LookupSetting(env_name);
  if (setting.value == nullptr) return absl::OkStatus();
  absl::StatusOr<T> value = parse(setting.value);
  if (!value.ok()) {
    return FiError(FI_EINVAL, absl::StrCat(Described(env_name, setting), ": ",
                                           value.status().message()));
  }
  *out = *value;
  return absl::OkStatus();
}

// Adapts an enum parser to ReadSetting.
template <typename Enum>
auto EnumParser(std::optional<Enum> (*parse)(absl::string_view),
                const char* what) {
  return [parse, what](absl::string_view text) -> absl::StatusOr<Enum> {
    std::optional<Enum> value = parse(text);
    if (!value.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("not ", what));
    }
    return *value;
  };
}

}  // namespace

void SetProviderCatalog(ProviderCatalog list_providers) {
  catalog.store(list_providers);
}

absl::Status EnsureConfigLoaded() {
  CheckState& state = State();
  std::vector<std::string> messages;
  absl::Status result;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (state.result.has_value()) return *state.result;
    result = CheckConfig(&messages);
    state.result = result;
  }
  for (const std::string& message : messages) {
    FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "%s\n", message.c_str());
  }
  return result;
}

bool ProviderEnabled(absl::string_view prov_name) {
  SettingValue setting =
      LookupSetting(ParamEnvName(kCoreProviderName, kProviderParam));
  if (setting.value == nullptr) return true;
  return NameFilter::Parse(setting.value).Allows(prov_name);
}

int ProviderPriority(absl::string_view prov_name, int built_in_default) {
  DefineProviderSettings(prov_name);
  std::optional<int> priority;
  absl::Status read =
      ReadSetting(prov_name, kPriorityParam, &ParseIntParam, &priority);
  if (!read.ok()) {
    FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "%s; using priority %d\n",
                    std::string(read.message()).c_str(), built_in_default);
  }
  return priority.value_or(built_in_default);
}

absl::StatusOr<AttrOverrides> ProviderAttrOverrides(
    absl::string_view prov_name) {
  DefineProviderSettings(prov_name);
  AttrOverrides attrs;
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrTxSizeParam,
                                     &ParseSizeParam, &attrs.tx_size));
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrRxSizeParam,
                                     &ParseSizeParam, &attrs.rx_size));
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrMaxMsgSizeParam,
                                     &ParseSizeParam, &attrs.max_msg_size));
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrInjectSizeParam,
                                     &ParseSizeParam, &attrs.inject_size));
  FABRIC_RETURN_IF_ERROR(ReadSetting(
      prov_name, kAttrThreadingParam,
      EnumParser(&ParseThreading, "a threading model (FI_THREAD_*)"),
      &attrs.threading));
  auto progress =
      EnumParser(&ParseProgress, "FI_PROGRESS_AUTO or FI_PROGRESS_MANUAL");
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrControlProgressParam,
                                     progress, &attrs.control_progress));
  FABRIC_RETURN_IF_ERROR(ReadSetting(prov_name, kAttrDataProgressParam,
                                     progress, &attrs.data_progress));
  return attrs;
}

void ResetConfigForTesting(const std::string& default_path) {
  ResetLoadedConfigForTesting(default_path);
  ResetLogFilterForTesting();
  CheckState& state = State();
  std::lock_guard<std::mutex> lock(state.mu);
  state.result.reset();
}

}  // namespace fabric

#include "fabric/api/config/param_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fabric {

const char* ProviderNameOrCore(const struct fi_provider* provider) {
  if (provider == nullptr || provider->name == nullptr)
    return kCoreProviderName;
  return provider->name;
}

std::string ParamEnvName(absl::string_view provider_name,
                         absl::string_view param_name) {
  std::string env_name =
      provider_name == kCoreProviderName
          ? absl::StrCat("FI_", param_name)
          : absl::StrCat("FI_", provider_name, "_", param_name);
  absl::AsciiStrToUpper(&env_name);
  return env_name;
}

bool IsReservedProviderParam(absl::string_view param_name) {
  return param_name == kPriorityParam || absl::StartsWith(param_name, "attr_");
}

}  // namespace fabric

// File: fabric/providers/util/provider_setting.h
//
// A provider's setting declared once: its name, type, default and help.
// Define() registers it (fi_param_define: FI_<PROV>_<NAME>, the
// configuration file's provider param, and `fi_info -e`, whose help text
// then ends with the default); Get() reads it, the default when unset.
//
//   constexpr BoolSetting kCrossMemory = {
//       "cma", true, "Copy large messages with cross-memory attach"};
//   kCrossMemory.Define(*this);                // the provider's constructor
//   bool cma = kCrossMemory.Get(*this);        // when it matters
#ifndef FABRIC_PROVIDERS_UTIL_PROVIDER_SETTING_H_
#define FABRIC_PROVIDERS_UTIL_PROVIDER_SETTING_H_

#include <stddef.h>

#include <string>
#include <type_traits>

#include "fabric/providers/provider.h"

namespace fabric {

// T is bool, size_t or const char* (a string; its default_value says in
// words what an unset one means, "every interface that is up", and Get
// answers "" then).
template <typename T>
struct Setting {
  using Value =
      std::conditional_t<std::is_same_v<T, const char*>, std::string, T>;

  const char* name;
  T default_value;
  const char* help;

  void Define(const Provider& provider) const;
  Value Get(const Provider& provider) const;
};

// Defined for these three (provider_setting.cc).
extern template struct Setting<bool>;
extern template struct Setting<size_t>;
extern template struct Setting<const char*>;

using BoolSetting = Setting<bool>;
using SizeSetting = Setting<size_t>;
using StringSetting = Setting<const char*>;

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PROVIDER_SETTING_H_

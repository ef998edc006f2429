#include "fabric/providers/util/provider_setting.h"

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#include "absl/strings/str_cat.h"

namespace fabric {
namespace {

fi_provider* Mutable(const Provider& provider) {
  // fi_param_get takes a non-const provider and does not change it.
  return const_cast<fi_provider*>(provider.c_provider());
}

void DefineWithDefault(const Provider& provider, const char* name,
                       fi_param_type type, const char* help,
                       const std::string& default_text) {
  std::string text = absl::StrCat(help, " (default: ", default_text, ")");
  fi_param_define(provider.c_provider(), name, type, "%s", text.c_str());
}

}  // namespace

template <typename T>
void Setting<T>::Define(const Provider& provider) const {
  if constexpr (std::is_same_v<T, bool>) {
    DefineWithDefault(provider, name, FI_PARAM_BOOL, help,
                      default_value ? "yes" : "no");
  } else if constexpr (std::is_same_v<T, size_t>) {
    DefineWithDefault(provider, name, FI_PARAM_SIZE_T, help,
                      absl::StrCat(default_value));
  } else {
    DefineWithDefault(provider, name, FI_PARAM_STRING, help, default_value);
  }
}

// fi_param_get leaves `value` alone when the setting is unset or not of
// its type (that it logs).
template <typename T>
typename Setting<T>::Value Setting<T>::Get(const Provider& provider) const {
  if constexpr (std::is_same_v<T, bool>) {
    int value = default_value ? 1 : 0;
    fi_param_get_bool(Mutable(provider), name, &value);
    return value != 0;
  } else if constexpr (std::is_same_v<T, size_t>) {
    size_t value = default_value;
    fi_param_get_size_t(Mutable(provider), name, &value);
    return value;
  } else {
    char* value = nullptr;
    if (fi_param_get_str(Mutable(provider), name, &value) == 0 &&
        value != nullptr) {
      return value;
    }
    return "";
  }
}

template struct Setting<bool>;
template struct Setting<size_t>;
template struct Setting<const char*>;

}  // namespace fabric

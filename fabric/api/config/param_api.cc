// fi_param_define, fi_param_get, fi_getparams and fi_freeparams: the C entry
// points of parameters (rdma/providers/fi_prov.h, rdma/fabric.h). A value
// comes from the environment, else the configuration file.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/loaded_config.h"
#include "fabric/api/config/log.h"
#include "fabric/api/config/param_names.h"
#include "fabric/api/config/param_registry.h"
#include "fabric/api/config/param_value.h"
#include "fabric/api/config/settings.h"
#include "fabric/api/core/export.h"

namespace fabric {
namespace {

std::string FormatV(const char* format, va_list args) {
  va_list measure;
  va_copy(measure, args);
  int size = vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  if (size <= 0) return std::string();
  std::string text(static_cast<size_t>(size) + 1, '\0');
  vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(size));
  return text;
}

// Parses `setting` with `parse` into *out; logs and returns -FI_EINVAL when
// it is malformed.
template <typename T, typename Parse>
int ReadTyped(const struct fi_provider* provider, const char* type_name,
              const ParamDefinition& param, const SettingValue& setting,
              Parse parse, T* out) {
  absl::StatusOr<T> value = parse(setting.value);
  if (!value.ok()) {
    FABRIC_LOG_WARN(
        provider, FI_LOG_CORE, "failed to parse %s var %s=%s (from %s): %s\n",
        type_name, param.name.c_str(), setting.value, SourceOf(setting).c_str(),
        std::string(value.status().message()).c_str());
    return -FI_EINVAL;
  }
  *out = *value;
  return FI_SUCCESS;
}

// Stores the value of `param`, read from `setting`, at `value`, as
// fi_param_get does for its type.
int ReadParam(const struct fi_provider* provider, const ParamDefinition& param,
              const SettingValue& setting, void* value) {
  const char* name = param.name.c_str();
  switch (param.type) {
    case FI_PARAM_STRING:
      *static_cast<char**>(value) = const_cast<char*>(setting.value);
      FABRIC_LOG_INFO(provider, FI_LOG_CORE, "read string var %s=%s\n", name,
                      setting.value);
      return FI_SUCCESS;
    case FI_PARAM_INT: {
      int* out = static_cast<int*>(value);
      int rc = ReadTyped(provider, "int", param, setting, &ParseIntParam, out);
      if (rc == FI_SUCCESS) {
        FABRIC_LOG_INFO(provider, FI_LOG_CORE, "read int var %s=%d\n", name,
                        *out);
      }
      return rc;
    }
    case FI_PARAM_BOOL: {
      bool flag = false;
      int rc =
          ReadTyped(provider, "bool", param, setting, &ParseBoolParam, &flag);
      if (rc == FI_SUCCESS) {
        *static_cast<int*>(value) = flag ? 1 : 0;
        FABRIC_LOG_INFO(provider, FI_LOG_CORE, "read bool var %s=%d\n", name,
                        flag ? 1 : 0);
      }
      return rc;
    }
    case FI_PARAM_SIZE_T: {
      size_t* out = static_cast<size_t*>(value);
      int rc =
          ReadTyped(provider, "size_t", param, setting, &ParseSizeParam, out);
      if (rc == FI_SUCCESS) {
        FABRIC_LOG_INFO(provider, FI_LOG_CORE, "read long var %s=%zu\n", name,
                        *out);
      }
      return rc;
    }
  }
  return -FI_EINVAL;
}

// One fi_param of fi_getparams: the help string ends with where the value
// comes from. False, with nothing allocated, when out of memory.
bool FillParam(const ParamDefinition& param, struct fi_param* out) {
  SettingValue setting = LookupSetting(param.env_name);
  std::string help = absl::StrCat(param.help, " [",
                                  setting.value != nullptr ? "value from " : "",
                                  SourceOf(setting), "]");
  char* name = strdup(param.env_name.c_str());
  char* help_string = strdup(help.c_str());
  char* value = setting.value == nullptr ? nullptr : strdup(setting.value);
  if (name == nullptr || help_string == nullptr ||
      (setting.value != nullptr && value == nullptr)) {
    free(name);
    free(help_string);
    free(value);
    return false;
  }
  out->name = name;
  out->type = param.type;
  out->help_string = help_string;
  out->value = value;
  return true;
}

}  // namespace
}  // namespace fabric

extern "C" {

FABRIC_EXPORT int fi_param_define(const struct fi_provider* provider,
                                  const char* param_name,
                                  enum fi_param_type type,
                                  const char* help_string_fmt, ...) {
  if (param_name == nullptr || help_string_fmt == nullptr) {
    FABRIC_LOG_WARN(provider, FI_LOG_CORE,
                    "Failed to register %s variable: provider coding error\n",
                    param_name == nullptr ? "(null)" : param_name);
    return -FI_EINVAL;
  }
  va_list args;
  va_start(args, help_string_fmt);
  std::string help = fabric::FormatV(help_string_fmt, args);
  va_end(args);
  absl::Status defined = fabric::DefineParam(
      fabric::ProviderNameOrCore(provider), param_name, type, help);
  if (!defined.ok()) {
    FABRIC_LOG_WARN(provider, FI_LOG_CORE,
                    "Failed to register %s variable: %s\n", param_name,
                    std::string(defined.message()).c_str());
    return -FI_EINVAL;
  }
  FABRIC_LOG_DEBUG(provider, FI_LOG_CORE, "registered var %s\n", param_name);
  return FI_SUCCESS;
}

FABRIC_EXPORT int fi_param_get(struct fi_provider* provider,
                               const char* param_name, void* value) {
  if (param_name == nullptr || value == nullptr) {
    FABRIC_LOG_DEBUG(provider, FI_LOG_CORE,
                     "Failed to read %s variable: provider coding error\n",
                     param_name == nullptr ? "(null)" : param_name);
    return -FI_EINVAL;
  }
  std::optional<fabric::ParamDefinition> param =
      fabric::FindParam(fabric::ProviderNameOrCore(provider), param_name);
  if (!param.has_value()) {
    FABRIC_LOG_DEBUG(provider, FI_LOG_CORE,
                     "Failed to find parameter %s: was not defined\n",
                     param_name);
    return -FI_ENOENT;
  }
  fabric::SettingValue setting = fabric::LookupSetting(param->env_name);
  if (setting.value == nullptr) {
    FABRIC_LOG_INFO(provider, FI_LOG_CORE, "variable %s=<not set>\n",
                    param_name);
    return -FI_ENODATA;
  }
  return fabric::ReadParam(provider, *param, setting, value);
}

FABRIC_EXPORT int fi_getparams(struct fi_param** params, int* count) {
  if (params == nullptr || count == nullptr) return -FI_EINVAL;
  // Has every provider define its parameters; problems are logged there.
  fabric::EnsureConfigLoaded().IgnoreError();
  std::vector<fabric::ParamDefinition> all = fabric::AllParams();
  // One more, all null, ends the list.
  auto* list =
      static_cast<struct fi_param*>(calloc(all.size() + 1, sizeof(fi_param)));
  if (list == nullptr) return -FI_ENOMEM;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!fabric::FillParam(all[i], &list[i])) {
      fi_freeparams(list);
      return -FI_ENOMEM;
    }
  }
  *params = list;
  *count = static_cast<int>(all.size());
  return FI_SUCCESS;
}

FABRIC_EXPORT void fi_freeparams(struct fi_param* params) {
  if (params == nullptr) return;
  for (struct fi_param* param = params; param->name != nullptr; ++param) {
    free(const_cast<char*>(param->name));
    free(const_cast<char*>(param->help_string));
    free(const_cast<char*>(param->value));
  }
  free(params);
}

}  // extern "C"

// File: fabric/api/config/param_registry.h
//
// The parameters defined so far (fi_param_define), by provider and name, in
// the order they were defined. The core's own parameters (log_level,
// provider, config, ...) come first, defined when the registry is created.
// Thread-safe.
//
//   DefineParam("tcp", "iface", FI_PARAM_STRING, "Specify interface name");
//   std::optional<ParamDefinition> iface = FindParam("tcp", "iface");
//   iface->env_name;  // "FI_TCP_IFACE"
//   iface->help;      // "tcp: Specify interface name"
#ifndef FABRIC_API_CONFIG_PARAM_REGISTRY_H_
#define FABRIC_API_CONFIG_PARAM_REGISTRY_H_

#include <rdma/fabric.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fabric {

struct ParamDefinition {
  std::string provider;  // kCoreProviderName for the core's
  std::string name;      // as defined: "iface"
  enum fi_param_type type = FI_PARAM_STRING;
  std::string help;      // as fi_getparams shows it: "tcp: Specify ..."
  std::string env_name;  // "FI_TCP_IFACE"
};

// Defines parameter `name` of `provider` ("core" for the core). Defining a
// parameter again with the same type changes nothing; with another type, or
// with an empty name or help, or an unknown type, is an error.
absl::Status DefineParam(absl::string_view provider, absl::string_view name,
                         enum fi_param_type type, absl::string_view help);

// The definition of `name` of `provider`, if defined.
std::optional<ParamDefinition> FindParam(absl::string_view provider,
                                         absl::string_view name);

// The names of the parameters `provider` has defined, in order.
std::vector<std::string> ParamNamesOf(absl::string_view provider);

// Every definition, in order.
std::vector<ParamDefinition> AllParams();

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_PARAM_REGISTRY_H_

// File: fabric/api/config/settings.h
//
// What the core asks of the configuration: whether it is valid, which
// providers are enabled and in which order, and the attribute defaults each
// provider starts from. Each answer takes, in this order: the environment
// (FI_PROVIDER, FI_TCP_PRIORITY, ...), the configuration file (config.proto:
// FI_CONFIG, else /etc/fabric/fabric.conf), the built-in default.
//
//   // registry.cc, once, before the first fi_getinfo:
//   SetProviderCatalog(&AllProviderNames);
//   // fi_getinfo, fi_fabric:
//   FABRIC_RETURN_IF_ERROR(EnsureConfigLoaded());  // a bad file: -FI_EINVAL
//   if (!ProviderEnabled("tcp")) ...
//   int priority = ProviderPriority("tcp", /*built_in_default=*/10);
//   absl::StatusOr<AttrOverrides> attrs = ProviderAttrOverrides("tcp");
//   if (attrs.ok() && attrs->tx_size) info->tx_attr->size = *attrs->tx_size;
//
// Every setting is an fi_param (fi_getparams lists it with its value and, at
// the end of its help string, where the value comes from: " [default]",
// " [value from environment]", " [value from /etc/fabric/fabric.conf:12]",
// " [value from environment, overriding /etc/fabric/fabric.conf:12]").
// Besides its own, each provider has the parameters "priority" and
// "attr_*" (FI_TCP_PRIORITY, FI_TCP_ATTR_TX_SIZE, ...; see config.proto).
//
// For fi_open("logging"), OpenLogging comes with this header (log_ops.h).
#ifndef FABRIC_API_CONFIG_SETTINGS_H_
#define FABRIC_API_CONFIG_SETTINGS_H_

#include <rdma/fabric.h>
#include <stddef.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fabric/api/config/loaded_config.h"
#include "fabric/api/config/log_ops.h"

namespace fabric {

// Names every compiled-in provider, having constructed each, so that each
// has defined its parameters (fi_param_define). It must not call
// EnsureConfigLoaded; ProviderEnabled and the like are fine.
using ProviderCatalog = std::vector<std::string> (*)();

// Tells the configuration which providers exist, so that EnsureConfigLoaded
// can check the provider names and parameters the file uses, and
// fi_getparams can list every provider's parameters. Without a catalog
// those checks are skipped. Call before the first EnsureConfigLoaded.
void SetProviderCatalog(ProviderCatalog catalog);

// Reads and checks the configuration file, once; thread-safe; every later
// call returns the same result. An error (FI_EINVAL: syntax error, unknown
// field, bad value, unknown provider, a parameter the provider does not
// define, ...) says what and where ("file:line:column: ..."); each problem
// is also logged at warning level. Unknown provider names in FI_PROVIDER
// or FI_LOG_PROV from the environment are logged, as libfabric does, but
// are not errors.
absl::Status EnsureConfigLoaded();

// Whether fi_getinfo may use provider `prov_name`: FI_PROVIDER (else the
// file's enabled_providers) as libfabric reads it: "tcp,udp" only those,
// "^verbs" all but those; unset or empty: all.
bool ProviderEnabled(absl::string_view prov_name);

// FI_<PROV>_PRIORITY (else the file's Provider.priority), else
// `built_in_default`; higher first. A malformed value is logged and the
// default used.
int ProviderPriority(absl::string_view prov_name, int built_in_default);

// Defaults for a provider's fi_info attributes (config.proto's
// AttrOverrides, with the environment's FI_<PROV>_ATTR_* on top). Unset
// fields keep the provider's own defaults.
struct AttrOverrides {
  std::optional<size_t> tx_size;               // fi_tx_attr.size
  std::optional<size_t> rx_size;               // fi_rx_attr.size
  std::optional<size_t> max_msg_size;          // fi_ep_attr.max_msg_size
  std::optional<size_t> inject_size;           // fi_tx_attr.inject_size
  std::optional<enum fi_threading> threading;  // fi_domain_attr.threading
  std::optional<enum fi_progress> control_progress;
  std::optional<enum fi_progress> data_progress;
};

// The attribute defaults of `prov_name`; FI_EINVAL when an environment
// variable holds a malformed value (the file's are checked on loading).
absl::StatusOr<AttrOverrides> ProviderAttrOverrides(
    absl::string_view prov_name);

// Tests only: forgets the file read, the result of EnsureConfigLoaded and
// the log filter, so that the next use reads everything again, with
// `default_path` in place of /etc/fabric/fabric.conf. The catalog and the
// defined parameters stay.
void ResetConfigForTesting(
    const std::string& default_path = kDefaultConfigPath);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_SETTINGS_H_

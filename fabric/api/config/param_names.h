// File: fabric/api/config/param_names.h
//
// How an fi_param's name becomes the environment variable that sets it, and
// the names of the parameters the configuration layer itself defines.
//
// As in libfabric, a provider's parameter "iface" is FI_<PROVIDER>_IFACE
// (FI_TCP_IFACE; the provider name is upper-cased whole, so "ofi_rxm" gives
// FI_OFI_RXM_...), and a core parameter "log_level" is FI_LOG_LEVEL:
//
//   ParamEnvName("tcp", "iface");       // "FI_TCP_IFACE"
//   ParamEnvName("core", "log_level");  // "FI_LOG_LEVEL"
#ifndef FABRIC_API_CONFIG_PARAM_NAMES_H_
#define FABRIC_API_CONFIG_PARAM_NAMES_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#include <string>

#include "absl/strings/string_view.h"

namespace fabric {

// The name the core's parameters are defined under: fi_param_define(NULL,
// ...) and a provider named "core" are the same.
inline constexpr char kCoreProviderName[] = "core";

// The name `provider` defines parameters and logs under: its name, or
// kCoreProviderName when `provider` or its name is null.
const char* ProviderNameOrCore(const struct fi_provider* provider);

// The environment variable of parameter `param_name` of `provider_name`
// ("core" for the core's parameters).
std::string ParamEnvName(absl::string_view provider_name,
                         absl::string_view param_name);

// The core's parameters (defined by the library itself).
inline constexpr char kLogIntervalParam[] = "log_interval";
inline constexpr char kLogLevelParam[] = "log_level";
inline constexpr char kLogProvParam[] = "log_prov";
inline constexpr char kLogSubsysParam[] = "log_subsys";
inline constexpr char kProviderParam[] = "provider";
inline constexpr char kConfigParam[] = "config";
inline constexpr char kMrCacheMaxSizeParam[] = "mr_cache_max_size";
inline constexpr char kMrCacheMaxCountParam[] = "mr_cache_max_count";
inline constexpr char kMrCacheMonitorParam[] = "mr_cache_monitor";

// The parameters the configuration layer defines for every provider, beside
// the provider's own (Provider.priority and Provider.attrs in config.proto).
inline constexpr char kPriorityParam[] = "priority";
inline constexpr char kAttrTxSizeParam[] = "attr_tx_size";
inline constexpr char kAttrRxSizeParam[] = "attr_rx_size";
inline constexpr char kAttrMaxMsgSizeParam[] = "attr_max_msg_size";
inline constexpr char kAttrInjectSizeParam[] = "attr_inject_size";
inline constexpr char kAttrThreadingParam[] = "attr_threading";
inline constexpr char kAttrControlProgressParam[] = "attr_control_progress";
inline constexpr char kAttrDataProgressParam[] = "attr_data_progress";

// True for "priority" and every name starting with "attr_": names a
// provider's own parameters may not use.
bool IsReservedProviderParam(absl::string_view param_name);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_PARAM_NAMES_H_

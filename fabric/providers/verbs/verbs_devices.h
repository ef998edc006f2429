// File: fabric/providers/verbs/verbs_devices.h
//
// The RDMA device ports of this machine, through rdma-core's libibverbs
// (ibv_get_device_list, ibv_query_device, ibv_query_port, ibv_query_gid),
// loaded with dlopen (verbs_api.h) so that the library runs where
// rdma-core is not installed. Each port's network interface (RoCE: the GID
// table's netdev; IPoIB: the device's net/ directory in sysfs) gives its IP
// addresses.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_DEVICES_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_DEVICES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "fabric/providers/verbs/verbs_attr.h"

namespace fabric {
namespace verbs {

// Every port of every device; empty when there are no devices. FI_ENODATA
// when libibverbs or librdmacm cannot be loaded. A device that cannot be opened or
// queried is left out, and `skipped` (when given) gets why.
absl::StatusOr<std::vector<PortDescription>> ListPorts(
    std::vector<std::string>* skipped);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_DEVICES_H_

// File: fabric/providers/util/ip_discovery.h
//
// Discovery for providers that address peers with IP socket addresses (tcp,
// udp): one candidate fi_info per interface address and endpoint template,
// with src_addr / dest_addr / addr_format filled in from fi_getinfo's node,
// service, flags and address hints, following fi_getinfo(3):
//
// - FI_SOURCE: node/service name the local address; a wildcard (no node)
//   listens on every interface.
// - otherwise node/service name the destination; only the interface the kernel
//   routes that destination through is offered, with its address as source.
// - FI_ADDR_STR nodes ("fi_sockaddr_in://10.0.0.1:7471") stand for both.
// - hints->addr_format FI_SOCKADDR / FI_ADDR_STR selects how addresses are
//   returned; FI_SOCKADDR_IN / FI_SOCKADDR_IN6 select the IP family.
#ifndef FABRIC_PROVIDERS_UTIL_IP_DISCOVERY_H_
#define FABRIC_PROVIDERS_UTIL_IP_DISCOVERY_H_

#include <rdma/fabric.h>

#include <vector>

#include "absl/status/statusor.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/provider.h"
#include "fabric/providers/util/interfaces.h"

namespace fabric {

// Candidates for `request` built from `templates` (attributes of each
// endpoint type the provider offers; names and addresses are filled in here)
// over `interfaces`. An FI_ENODATA status says why nothing is offered (e.g. a
// node that does not resolve); FI_EINVAL for malformed addresses.
absl::StatusOr<InfoList> DiscoverIp(const Provider& provider,
                                    const GetInfoRequest& request,
                                    const std::vector<IpInterface>& interfaces,
                                    const std::vector<const fi_info*>& templates);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_IP_DISCOVERY_H_

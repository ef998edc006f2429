// File: fabric/providers/verbs/verbs_attr.h
//
// What the verbs provider reports for one port of an RDMA device, from the
// device's and the port's attributes (ibv_query_device, ibv_query_port,
// ibv_query_gid): pure functions, so that attributes captured on real
// hardware test them here.
//
// A port that is ACTIVE gives one FI_EP_MSG fi_info (FI_PROTO_RDMA_CM_IB_RC)
// per address it has: on InfiniBand, its GID 0 as FI_SOCKADDR_IB; on both
// InfiniBand (IPoIB) and Ethernet (RoCE), each IPv4 address of its network
// interface as FI_SOCKADDR_IN. The domain is the device ("mlx5_0"), the
// fabric "IB-0x" and GID 0's subnet prefix in hex (libfabric's naming).
// Limits come from the device: queue depths from max_qp_wr, iov limits
// from max_sge, counts of CQs, endpoints and regions from max_cq, max_qp
// and max_mr, the message size from the port's max_msg_sz; FI_ATOMIC only
// when the device's atomic_cap is not IBV_ATOMIC_NONE. The memory
// registration mode is what RC needs: FI_MR_LOCAL, FI_MR_VIRT_ADDR,
// FI_MR_ALLOCATED and FI_MR_PROV_KEY. inject_size is the inline data an RC
// queue pair takes, up to 256 (probed: the device attributes do not say).
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_ATTR_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_ATTR_H_

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/util/info_template.h"

namespace fabric {
namespace verbs {

// One port as discovery finds it.
struct PortDescription {
  std::string device;  // ibv_get_device_name
  ibv_device_attr device_attr = {};
  uint8_t port = 1;
  ibv_port_attr port_attr = {};
  ibv_gid gid = {};  // index 0
  // The IPv4 and IPv6 addresses of the port's network interface (RoCE,
  // IPoIB), port 0.
  std::vector<IpAddress> ip_addresses;
  // The inline data an RC queue pair takes, up to kMaxInjectSize
  // (VerbsApi::MaxInlineData): the MSG endpoints' inject_size.
  uint32_t max_inline = 0;
};

// What MSG endpoints need of the application's registrations. FI_MR_LOCAL
// is taken when the application offers it (descriptors for every buffer:
// the fastest path); without it, buffers are registered through the
// domain's registration cache as they are posted (VerbsDomain::AcquireLocal).
inline constexpr uint64_t kMrModeRequired =
    FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
inline constexpr uint64_t kMrModeOptional = FI_MR_LOCAL;
// The most inline data asked of a device for MSG endpoints (libfabric's
// verbs asks the same by default, FI_VERBS_INLINE_SIZE): sends and writes
// up to it need no registration, and fi_inject takes them.
inline constexpr uint32_t kMaxInjectSize = 256;

// An RC queue pair's attributes on `port`'s device (no names, no address).
void DescribeRc(const PortDescription& port, InfoTemplate* t);

// The queue depth and scatter-gather entries an endpoint gets unless the
// application asks (libfabric's verbs defaults): a queue pair of the
// device's maxima takes much memory, and some devices cannot create one
// (their limits do not combine).
inline constexpr size_t kDefaultQueueSize = 384;
inline constexpr size_t kDefaultIovLimit = 4;

// Fits `t` (DescribeRc's) to `hints` (may be null):
// - queue sizes and iov limits (the device's maxima) narrowed to what the
//   hints ask for, or to the defaults where they ask nothing; a hint beyond
//   the maximum leaves the maximum (the core then reports it unmet);
// - the FI_RX_CQ_DATA mode (an RMA write with remote CQ data consumes a
//   receive at the target) required when the hints accept it (or there
//   are none); an application that does not accept it gets endpoints whose
//   writes with remote CQ data fail with -FI_EOPNOTSUPP (messages with
//   data are unaffected).
void FitToHints(const fi_info* hints, InfoTemplate* t);

// A copy of `base` named for `port` (its fabric, its device as the domain,
// prov_name "verbs", `prov_version`), with `address` as its source.
absl::StatusOr<InfoPtr> NamedInfo(const fi_info& base,
                                  const PortDescription& port,
                                  uint32_t prov_version, uint32_t addr_format,
                                  const void* address, size_t len);

// "IB-0xfe80000000000000": the fabric of GID `gid`'s subnet.
std::string FabricName(const ibv_gid& gid);

// The fi_info entries of `port` (prov_name "verbs", queues sized for
// `hints`), or FI_ENODATA with
// the reason when it offers none (a port that is not ACTIVE, an unknown
// link layer, no address).
absl::StatusOr<InfoList> PortInfos(const PortDescription& port,
                                   uint32_t prov_version,
                                   const fi_info* hints = nullptr);

// fi_getinfo's view of a port's AF_IB info `offered` (from PortInfos) for
// `node`, `service` and `hints` (may be null): null when the request names
// IP addresses (a node or service, IP addresses in the hints) or another
// address format; with FI_SOCKADDR_IB hints, null unless their source is
// the port's GID, and otherwise a copy with their source (and the service
// ID the application chose in it) and destination.
absl::StatusOr<InfoPtr> IbInfoFor(const fi_info& offered, const char* node,
                                  const char* service, const fi_info* hints);

// The FI_EP_RDM info over the MSG info `msg` (an IP-addressed one from
// fi_getinfo): `rdm` (the RDM data path's attributes, rxm_ep.h) named and
// addressed as `msg` (fabric, domain, provider, address format, source and
// destination), with protocol FI_PROTO_RXM.
absl::StatusOr<InfoPtr> RdmInfoFor(const fi_info& msg, const fi_info& rdm);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_ATTR_H_

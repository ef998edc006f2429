// File: fabric/providers/verbs/verbs_ud_attr.h
//
// FI_EP_DGRAM over unreliable datagram (UD) queue pairs, as addressing and
// discovery see it: the endpoint name (FI_ADDR_IB_UD), the sender's GID in
// the 40 bytes the device puts in front of every UD receive, and what
// fi_getinfo reports for a port. Pure functions, tested without a device.
//
// A port offers one FI_EP_DGRAM fi_info (FI_PROTO_IB_UD) whose source is
// the port's GID 0 with queue pair number 0 (no endpoint yet). Datagrams
// are at most the port's active MTU (1024 to 4096 bytes). Peers are named
// by their endpoint's name (fi_getname), exchanged out of band: fi_getinfo
// takes one as hints->dest_addr (FI_ADDR_IB_UD), and offers no datagram
// endpoint for a node or service (neither names a queue pair).
//
// Unlike libfabric's verbs, no FI_MSG_PREFIX mode: the device's 40 bytes
// land in a buffer of the endpoint's own, so receive buffers hold only the
// message (and a receive takes two scatter-gather entries fewer than the
// device's max_sge: the other is for what does not fit, verbs_dgram_ep.h).
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_UD_ATTR_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_UD_ATTR_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/verbs/verbs_attr.h"

namespace fabric {
namespace verbs {

// An endpoint's name: FI_ADDR_IB_UD's 32 bytes (uint64_t[4]). Numbers are
// in network order; the reserved bytes are zero.
struct UdName {
  uint8_t gid[16];
  uint32_t qpn;   // 24 bits
  uint32_t qkey;
  uint16_t lid;   // InfiniBand; 0 on RoCE
  uint8_t reserved[6];
};
static_assert(sizeof(UdName) == 32, "FI_ADDR_IB_UD is uint64_t[4]");

// The Q_Key every endpoint's queue pair takes (the high bit clear: not a
// controlled key).
inline constexpr uint32_t kUdQkey = 0x0fab0001;

// The bytes a UD receive places in front of the message: a GRH (InfiniBand,
// RoCE v1 and RoCE v2 over IPv6) or 20 unused bytes and an IPv4 header
// (RoCE v2 over IPv4).
inline constexpr size_t kGrhSize = 40;

// fi_inject's limit on a datagram endpoint (at most the MTU).
inline constexpr size_t kUdInjectSize = 64;

UdName MakeUdName(const ibv_gid& gid, uint32_t qpn, uint16_t lid);
uint32_t QpnOf(const UdName& name);
uint32_t QkeyOf(const UdName& name);
uint16_t LidOf(const UdName& name);

// The name in `addr` (`len` bytes) of an endpoint to send to: FI_EINVAL,
// saying why, for a NULL address, another length, a queue pair number of 0
// (no endpoint) or over 24 bits, or reserved bytes that are not zero.
absl::StatusOr<UdName> ParseUdName(const void* addr, size_t len);

// "fi_addr_ib_ud://[fe80::1]/qpn=0x12/qkey=0xfab0001/lid=0" (fi_av_straddr).
std::string UdNameString(const UdName& name);

// The sender's GID from the kGrhSize bytes in front of a receive that
// carried a GRH (IBV_WC_GRH): the GRH's source GID, or an IPv4 header's
// source address as an IPv4-mapped GID. FI_EINVAL when the bytes are
// neither.
absl::StatusOr<ibv_gid> SenderGid(const uint8_t* grh);

// The bytes of `mtu` (IBV_MTU_256 .. IBV_MTU_4096); 0 for another value.
size_t MtuBytes(int mtu);

// A UD queue pair's attributes on `port`'s device (no names, no address),
// fitted to `hints` (may be null) as FitToHints does for RC.
void DescribeUd(const PortDescription& port, const fi_info* hints,
                InfoTemplate* t);

// The FI_EP_DGRAM info of `port` for fi_getinfo's `node`, `service` and
// `hints` (may be null): null when the request names a node or service, or
// asks for another address format or another source; with hints->dest_addr
// (FI_ADDR_IB_UD), the info has it as its destination (FI_EINVAL when it
// is malformed). FI_ENODATA when the port is not ACTIVE or its MTU unknown.
absl::StatusOr<InfoPtr> UdInfoFor(const PortDescription& port,
                                  uint32_t prov_version, const char* node,
                                  const char* service, const fi_info* hints);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_UD_ATTR_H_

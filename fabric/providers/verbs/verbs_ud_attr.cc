#include "fabric/providers/verbs/verbs_ud_attr.h"

#include <arpa/inet.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace verbs {
namespace {

// Where the parts of the device's 40 bytes are: a GRH's version nibble and
// source GID, and an IPv4 header (after 20 unused bytes) with its source.
constexpr size_t kGrhSourceGid = 8;
constexpr size_t kIpv4Header = 20;
constexpr size_t kIpv4Source = kIpv4Header + 12;

size_t Limit(int value) { return value > 0 ? static_cast<size_t>(value) : 0; }

}  // namespace

UdName MakeUdName(const ibv_gid& gid, uint32_t qpn, uint16_t lid) {
  UdName name = {};
  memcpy(name.gid, gid.raw, sizeof(name.gid));
  name.qpn = htonl(qpn);
  name.qkey = htonl(kUdQkey);
  name.lid = htons(lid);
  return name;
}

uint32_t QpnOf(const UdName& name) { return ntohl(name.qpn); }
uint32_t QkeyOf(const UdName& name) { return ntohl(name.qkey); }
uint16_t LidOf(const UdName& name) { return ntohs(name.lid); }

absl::StatusOr<UdName> ParseUdName(const void* addr, size_t len) {
  if (addr == nullptr) return FiError(FI_EINVAL, "the UD address is NULL");
  if (len != sizeof(UdName)) {
    return FiError(FI_EINVAL, absl::StrCat("a UD address (FI_ADDR_IB_UD) has ",
                                           sizeof(UdName), " bytes, not ",
                                           len));
  }
  UdName name;
  memcpy(&name, addr, sizeof(name));
  const uint32_t qpn = QpnOf(name);
  if (qpn == 0 || qpn > 0xffffff) {
    return FiError(FI_EINVAL, absl::StrCat("UD address with queue pair "
                                           "number ", qpn,
                                           " (not an endpoint's)"));
  }
  for (uint8_t byte : name.reserved) {
    if (byte != 0) {
      return FiError(FI_EINVAL, "UD address with reserved bytes set (not an "
                                "endpoint's name)");
    }
  }
  return name;
}

std::string UdNameString(const UdName& name) {
  char gid[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, name.gid, gid, sizeof(gid));
  return absl::StrCat("fi_addr_ib_ud://[", gid, "]/qpn=0x",
                      absl::Hex(QpnOf(name)), "/qkey=0x",
                      absl::Hex(QkeyOf(name)), "/lid=", LidOf(name));
}

absl::StatusOr<ibv_gid> SenderGid(const uint8_t* grh) {
  ibv_gid gid = {};
  if ((grh[0] >> 4) == 6) {
    memcpy(gid.raw, grh + kGrhSourceGid, sizeof(gid.raw));
    return gid;
  }
  if ((grh[kIpv4Header] >> 4) == 4) {
    // ::ffff:a.b.c.d, the GID RoCE v2 gives an IPv4 address.
    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    memcpy(gid.raw + 12, grh + kIpv4Source, 4);
    return gid;
  }
  return FiError(FI_EINVAL, "the receive's first 40 bytes are neither a GRH "
                            "nor an IPv4 header");
}

size_t MtuBytes(int mtu) {
  switch (mtu) {
    case IBV_MTU_256:
      return 256;
    case IBV_MTU_512:
      return 512;
    case IBV_MTU_1024:
      return 1024;
    case IBV_MTU_2048:
      return 2048;
    case IBV_MTU_4096:
      return 4096;
    default:
      return 0;
  }
}

void DescribeUd(const PortDescription& port, const fi_info* hints,
                InfoTemplate* t) {
  DescribeRc(port, t);
  FitToHints(hints, t);
  // A receive's first scatter-gather entry takes the device's 40 bytes, its
  // last the part of a datagram its buffers have no room for
  // (verbs_dgram_ep.h).
  t->rx.iov_limit = std::min(t->rx.iov_limit,
                             std::max<size_t>(Limit(port.device_attr.max_sge),
                                              3) - 2);
  t->tx.rma_iov_limit = 0;
  t->tx.msg_order = 0;  // datagrams may be lost: no order is promised
  t->rx.msg_order = 0;
  t->info.mode = 0;
  t->rx.mode = 0;
  const uint64_t mtu = MtuBytes(port.port_attr.active_mtu);
  t->ep.type = FI_EP_DGRAM;
  t->ep.protocol = FI_PROTO_IB_UD;
  t->ep.protocol_version = 1;
  t->ep.max_msg_size = mtu;
  t->ep.max_order_raw_size = 0;
  t->ep.max_order_war_size = 0;
  t->ep.max_order_waw_size = 0;
  t->tx.inject_size = std::min<size_t>(kUdInjectSize, mtu);
  t->domain.max_ep_srx_ctx = 0;
  t->SetCaps(FI_MSG | FI_SEND, FI_MSG | FI_RECV | FI_SOURCE);
}

absl::StatusOr<InfoPtr> UdInfoFor(const PortDescription& port,
                                  uint32_t prov_version, const char* node,
                                  const char* service, const fi_info* hints) {
  if (port.port_attr.state != IBV_PORT_ACTIVE ||
      MtuBytes(port.port_attr.active_mtu) == 0) {
    return FiError(FI_ENODATA, absl::StrCat(port.device, " port ",
                                            static_cast<int>(port.port),
                                            " is not ACTIVE or has no known "
                                            "MTU: no datagram endpoints"));
  }
  const uint32_t format =
      hints != nullptr ? hints->addr_format : uint32_t{FI_FORMAT_UNSPEC};
  if (node != nullptr || service != nullptr ||
      (format != FI_FORMAT_UNSPEC && format != FI_ADDR_IB_UD)) {
    return InfoPtr();
  }
  const bool ud_hints = format == FI_ADDR_IB_UD;
  if (hints != nullptr && !ud_hints &&
      (hints->src_addr != nullptr || hints->dest_addr != nullptr)) {
    return InfoPtr();  // addresses of another format
  }
  const UdName own = MakeUdName(port.gid, 0, port.port_attr.lid);
  if (ud_hints && hints->src_addr != nullptr) {
    const auto* wanted = static_cast<const UdName*>(hints->src_addr);
    if (hints->src_addrlen != sizeof(UdName) ||
        memcmp(wanted->gid, own.gid, sizeof(own.gid)) != 0) {
      return InfoPtr();
    }
  }
  InfoTemplate ud;
  DescribeUd(port, hints, &ud);
  absl::StatusOr<InfoPtr> info = NamedInfo(ud.info, port, prov_version,
                                           FI_ADDR_IB_UD, &own, sizeof(own));
  if (!info.ok()) return info.status();
  if (ud_hints && hints->dest_addr != nullptr) {
    absl::StatusOr<UdName> dest =
        ParseUdName(hints->dest_addr, hints->dest_addrlen);
    if (!dest.ok()) return dest.status();
    if (!SetAddress(&(*info)->dest_addr, &(*info)->dest_addrlen, &*dest,
                    sizeof(*dest))) {
      return FiError(FI_ENOMEM, "out of memory");
    }
  }
  return info;
}

}  // namespace verbs
}  // namespace fabric

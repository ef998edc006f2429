#include "fabric/providers/verbs/verbs_attr.h"

#include <endian.h>
#include <infiniband/ib.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/info_template.h"

namespace fabric {
namespace verbs {
namespace {

constexpr char kProviderName[] = "verbs";

// A device limit as a count (a negative one, which no device reports, as
// none).
size_t Limit(int value) { return value > 0 ? static_cast<size_t>(value) : 0; }

}  // namespace

void DescribeRc(const PortDescription& port, InfoTemplate* t) {
  const ibv_device_attr& device = port.device_attr;
  const uint64_t max_msg_size = port.port_attr.max_msg_sz;
  t->tx.msg_order = FI_ORDER_SAS;
  t->tx.comp_order = FI_ORDER_STRICT;
  // An endpoint's sends and receives complete on one CQ of tx.size +
  // rx.size entries, which the device caps at max_cqe, often below twice
  // max_qp_wr (soft-RoCE: 32767 against 1048576): each queue gets at most
  // half of it, so every size fi_getinfo offers can be created.
  const size_t queue_limit =
      std::min(Limit(device.max_qp_wr), Limit(device.max_cqe) / 2);
  t->tx.size = queue_limit;
  t->tx.iov_limit = Limit(device.max_sge);
  t->tx.rma_iov_limit = 1;
  t->tx.inject_size = port.max_inline;
  t->rx.msg_order = FI_ORDER_SAS;
  t->rx.comp_order = FI_ORDER_STRICT;
  t->rx.size = queue_limit;
  t->rx.iov_limit = Limit(device.max_sge);
  t->ep.type = FI_EP_MSG;
  t->ep.protocol = FI_PROTO_RDMA_CM_IB_RC;
  t->ep.protocol_version = 1;
  t->ep.max_msg_size = max_msg_size;
  t->ep.max_order_raw_size = max_msg_size;
  t->ep.max_order_war_size = max_msg_size;
  t->ep.max_order_waw_size = max_msg_size;
  t->domain.mr_mode = kMrModeRequired | kMrModeOptional;
  t->domain.mr_key_size = 4;
  t->domain.cq_data_size = 4;
  t->domain.cq_cnt = Limit(device.max_cq);
  t->domain.ep_cnt = Limit(device.max_qp);
  t->domain.tx_ctx_cnt = std::min(Limit(device.max_cq), Limit(device.max_qp));
  t->domain.rx_ctx_cnt = t->domain.tx_ctx_cnt;
  // An endpoint takes its receives from at most one SRQ, where the device
  // has them (fi_srx_context).
  t->domain.max_ep_srx_ctx = device.max_srq > 0 ? 1 : 0;
  t->domain.mr_cnt = Limit(device.max_mr);
  t->domain.max_err_data = 0;
  uint64_t atomic = device.atomic_cap != IBV_ATOMIC_NONE
                        ? static_cast<uint64_t>(FI_ATOMIC)
                        : 0;
  t->SetCaps(
      FI_MSG | FI_RMA | atomic | FI_SEND | FI_READ | FI_WRITE,
      FI_MSG | FI_RMA | atomic | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE);
}

namespace {

// The port's GID 0 as an AF_IB socket address.
sockaddr_ib IbAddress(const ibv_gid& gid) {
  sockaddr_ib address = {};
  address.sib_family = AF_IB;
  address.sib_pkey = htons(0xffff);
  memcpy(&address.sib_addr, gid.raw, sizeof(gid.raw));
  return address;
}

}  // namespace

absl::StatusOr<InfoPtr> NamedInfo(const fi_info& base,
                                  const PortDescription& port,
                                  uint32_t prov_version, uint32_t addr_format,
                                  const void* address, size_t len) {
  InfoPtr info = DupInfo(base);
  if (info == nullptr ||
      !SetString(&info->fabric_attr->name, FabricName(port.gid)) ||
      !SetString(&info->fabric_attr->prov_name, kProviderName) ||
      !SetString(&info->domain_attr->name, port.device) ||
      !SetAddress(&info->src_addr, &info->src_addrlen, address, len)) {
    return FiError(FI_ENOMEM, "cannot build a verbs fi_info");
  }
  info->fabric_attr->prov_version = prov_version;
  info->addr_format = addr_format;
  return info;
}

std::string FabricName(const ibv_gid& gid) {
  return absl::StrFormat("IB-0x%016x", be64toh(gid.global.subnet_prefix));
}

void FitToHints(const fi_info* hints, InfoTemplate* t) {
  auto pick = [](size_t asked, size_t limit, size_t fallback) {
    if (asked > limit) return limit;
    return asked > 0 ? asked : std::min(fallback, limit);
  };
  const fi_tx_attr* tx = hints != nullptr ? hints->tx_attr : nullptr;
  const fi_rx_attr* rx = hints != nullptr ? hints->rx_attr : nullptr;
  t->tx.size = pick(tx ? tx->size : 0, t->tx.size, kDefaultQueueSize);
  t->tx.iov_limit =
      pick(tx ? tx->iov_limit : 0, t->tx.iov_limit, kDefaultIovLimit);
  t->rx.size = pick(rx ? rx->size : 0, t->rx.size, kDefaultQueueSize);
  t->rx.iov_limit =
      pick(rx ? rx->iov_limit : 0, t->rx.iov_limit, kDefaultIovLimit);
  const uint64_t app_modes =
      hints == nullptr ? FI_RX_CQ_DATA
                       : hints->mode | (rx != nullptr ? rx->mode : 0);
  const uint64_t rx_cq_data = app_modes & FI_RX_CQ_DATA;
  t->info.mode = rx_cq_data;
  t->rx.mode = rx_cq_data;
}

absl::StatusOr<InfoList> PortInfos(const PortDescription& port,
                                   uint32_t prov_version,
                                   const fi_info* hints) {
  const std::string where =
      absl::StrCat(port.device, " port ", static_cast<int>(port.port));
  if (port.port_attr.state != IBV_PORT_ACTIVE) {
    return FiError(FI_ENODATA, absl::StrCat(where, " is not ACTIVE (state ",
                                            port.port_attr.state, ")"));
  }
  const uint8_t link = port.port_attr.link_layer;
  // Before link layers were reported, every port was InfiniBand.
  const bool infiniband =
      link == IBV_LINK_LAYER_INFINIBAND || link == IBV_LINK_LAYER_UNSPECIFIED;
  if (!infiniband && link != IBV_LINK_LAYER_ETHERNET) {
    return FiError(FI_ENODATA,
                   absl::StrCat(where, " has an unknown link layer ", link));
  }
  InfoTemplate rc;
  DescribeRc(port, &rc);
  FitToHints(hints, &rc);
  InfoList infos;
  if (infiniband) {
    sockaddr_ib address = IbAddress(port.gid);
    absl::StatusOr<InfoPtr> info =
        NamedInfo(rc.info, port, prov_version, FI_SOCKADDR_IB, &address,
                  sizeof(address));
    if (!info.ok()) return info.status();
    infos.Append(*std::move(info));
  }
  for (const IpAddress& ip : port.ip_addresses) {
    uint32_t format =
        ip.family() == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
    absl::StatusOr<InfoPtr> info = NamedInfo(
        rc.info, port, prov_version, format, ip.sockaddr_ptr(), ip.length());
    if (!info.ok()) return info.status();
    infos.Append(*std::move(info));
  }
  if (infos.empty()) {
    return FiError(FI_ENODATA, absl::StrCat(where,
                                            " is Ethernet (RoCE) without an IP "
                                            "address on its interface"));
  }
  return infos;
}

absl::StatusOr<InfoPtr> IbInfoFor(const fi_info& offered, const char* node,
                                  const char* service, const fi_info* hints) {
  const uint32_t format =
      hints != nullptr ? hints->addr_format : uint32_t{FI_FORMAT_UNSPEC};
  if (node != nullptr || service != nullptr ||
      (format != FI_FORMAT_UNSPEC && format != FI_SOCKADDR_IB)) {
    return InfoPtr();
  }
  const bool ib_hints = hints != nullptr && format == FI_SOCKADDR_IB;
  if (hints != nullptr && !ib_hints &&
      (hints->src_addr != nullptr || hints->dest_addr != nullptr)) {
    return InfoPtr();  // IP addresses in the hints
  }
  const auto* own = static_cast<const sockaddr_ib*>(offered.src_addr);
  if (ib_hints && hints->src_addr != nullptr) {
    const auto* wanted = static_cast<const sockaddr_ib*>(hints->src_addr);
    if (hints->src_addrlen != sizeof(sockaddr_ib) ||
        wanted->sib_family != AF_IB ||
        memcmp(&wanted->sib_addr, &own->sib_addr, sizeof(own->sib_addr)) !=
            0) {
      return InfoPtr();
    }
  }
  InfoPtr info = DupInfo(offered);
  if (info == nullptr) return FiError(FI_ENOMEM, "out of memory");
  if (ib_hints && hints->src_addr != nullptr &&
      !SetAddress(&info->src_addr, &info->src_addrlen, hints->src_addr,
                  hints->src_addrlen)) {
    return FiError(FI_ENOMEM, "out of memory");
  }
  if (ib_hints && hints->dest_addr != nullptr &&
      !SetAddress(&info->dest_addr, &info->dest_addrlen, hints->dest_addr,
                  hints->dest_addrlen)) {
    return FiError(FI_ENOMEM, "out of memory");
  }
  return info;
}

absl::StatusOr<InfoPtr> RdmInfoFor(const fi_info& msg, const fi_info& rdm) {
  InfoPtr info = DupInfo(rdm);
  if (info == nullptr ||
      !SetString(&info->fabric_attr->name, msg.fabric_attr->name) ||
      !SetString(&info->fabric_attr->prov_name, msg.fabric_attr->prov_name) ||
      !SetString(&info->domain_attr->name, msg.domain_attr->name) ||
      !SetAddress(&info->src_addr, &info->src_addrlen, msg.src_addr,
                  msg.src_addrlen) ||
      !SetAddress(&info->dest_addr, &info->dest_addrlen, msg.dest_addr,
                  msg.dest_addrlen)) {
    return FiError(FI_ENOMEM, "cannot build a verbs RDM fi_info");
  }
  info->fabric_attr->prov_version = msg.fabric_attr->prov_version;
  info->addr_format = msg.addr_format;
  info->ep_attr->protocol = FI_PROTO_RXM;
  info->ep_attr->protocol_version = 1;
  return info;
}

}  // namespace verbs
}  // namespace fabric

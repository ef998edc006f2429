#include "fabric/providers/verbs/verbs_provider.h"

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <mutex>
#include <string>
#include <vector>

#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/rxm/rxm_ep.h"
#include "fabric/providers/stream/atomic_ops.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/stream_attr.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/util/interfaces.h"
#include "fabric/providers/util/ip_discovery.h"
#include "fabric/providers/verbs/verbs_api.h"
#include "fabric/providers/verbs/verbs_attr.h"
#include "fabric/providers/verbs/verbs_devices.h"
#include "fabric/providers/verbs/verbs_dgram_ep.h"
#include "fabric/providers/verbs/verbs_domain.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_srx.h"
#include "fabric/providers/verbs/verbs_ud_attr.h"
#include "fabric/providers/verbs/verbs_ud_av.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace {

constexpr uint32_t kVerbsVersion = FI_VERSION(118, 0);

class VerbsProvider : public Provider {
 public:
  VerbsProvider() : Provider("verbs", kVerbsVersion) {
    // Limits depend on the device: none here.
    verbs::DescribeRc(verbs::PortDescription(), &rc_);
    // FI_EP_RDM is the stream data path's, over RC endpoints (rxm_ep.h).
    stream::DescribeStreamEndpoint(FI_EP_RDM, &rdm_);
  }

  int default_priority() const override { return 200; }

  InfoPtr DefaultInfo() const override { return NamedCopy(rc_.info); }

  // Per active port: its GID as an AF_IB address (InfiniBand, when the
  // request names no IP address), the IP addresses of its interface
  // addressed as the IP providers do (node, service, FI_SOURCE, hints), and
  // datagram endpoints named by GID and queue pair (verbs_ud_attr.h).
  absl::StatusOr<InfoList> Discover(
      const GetInfoRequest& request) const override {
    const std::vector<verbs::PortDescription>* ports = Ports();
    if (ports == nullptr) return InfoList();
    const fi_info* hints = request.hints;
    const uint32_t format =
        hints != nullptr ? hints->addr_format : uint32_t{FI_FORMAT_UNSPEC};
    InfoList infos;
    for (const verbs::PortDescription& port : *ports) {
      absl::StatusOr<InfoList> offered =
          verbs::PortInfos(port, version(), hints);
      if (!offered.ok()) {
        FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE, "%s\n",
               std::string(offered.status().message()).c_str());
        continue;
      }
      for (const fi_info* info = offered->head(); info != nullptr;
           info = info->next) {
        if (info->addr_format != FI_SOCKADDR_IB) continue;
        absl::StatusOr<InfoPtr> ib =
            verbs::IbInfoFor(*info, request.node, request.service, hints);
        if (!ib.ok()) return ib.status();
        if (*ib != nullptr) infos.Append(*std::move(ib));
      }
      absl::StatusOr<InfoPtr> ud = verbs::UdInfoFor(
          port, version(), request.node, request.service, hints);
      if (!ud.ok() && ToFiErrno(ud.status()) != -FI_ENODATA) {
        return ud.status();
      }
      if (ud.ok() && *ud != nullptr) infos.Append(*std::move(ud));
      if (format == FI_SOCKADDR_IB || format == FI_ADDR_STR ||
          port.ip_addresses.empty()) {
        continue;  // verbs takes IP addresses as sockaddrs only
      }
      absl::StatusOr<InfoList> ip = DiscoverPortIp(port, request);
      if (!ip.ok()) {
        if (ToFiErrno(ip.status()) != -FI_ENODATA) return ip.status();
        continue;
      }
      // Each IP address serves RDM endpoints over RC too.
      InfoList rdm;
      for (const fi_info* msg = ip->head(); msg != nullptr; msg = msg->next) {
        absl::StatusOr<InfoPtr> over = verbs::RdmInfoFor(*msg, rdm_.info);
        if (!over.ok()) return over.status();
        rdm.Append(*std::move(over));
      }
      infos.Append(*std::move(ip));
      infos.Append(std::move(rdm));
    }
    return infos;
  }

  AttrSupport SupportFor(const fi_info& candidate) const override {
    if (IsRdm(candidate)) {
      // The stream data path's settings; no authorization keys (the
      // connections carry none).
      AttrSupport support = stream::StreamAttrSupport();
      support.max_auth_key_size = 0;
      return support;
    }
    AttrSupport support;
    support.threading = Bit(FI_THREAD_SAFE) | Bit(FI_THREAD_DOMAIN) |
                        Bit(FI_THREAD_COMPLETION) | Bit(FI_THREAD_ENDPOINT);
    support.progress = Bit(FI_PROGRESS_AUTO) | Bit(FI_PROGRESS_MANUAL);
    support.resource_mgmt = Bit(FI_RM_ENABLED);
    support.av_types = Bit(FI_AV_MAP);
    if (candidate.ep_attr->type == FI_EP_DGRAM) {
      support.av_types |= Bit(FI_AV_TABLE);
    }
    support.mr_mode_required = verbs::kMrModeRequired;
    support.mr_mode_optional = verbs::kMrModeOptional;
    return support;
  }

  int OpenFabric(const fi_fabric_attr& attr, fid_fabric** fabric,
                 void* context) const override {
    const std::vector<verbs::PortDescription>* ports = Ports();
    for (size_t i = 0; ports != nullptr && i < ports->size(); ++i) {
      if (verbs::FabricName((*ports)[i].gid) == attr.name) {
        return OpenUtilFabric(*this, attr, fabric, context);
      }
    }
    FI_WARN(c_provider(), FI_LOG_FABRIC, "no verbs fabric named '%s'\n",
            attr.name == nullptr ? "(null)" : attr.name);
    return -FI_ENODATA;
  }

  // A domain of RDM endpoints keeps no device state: their data path
  // reaches memory regions in software, and their connections' buffers are
  // registered in a domain of their own.
  absl::StatusOr<std::unique_ptr<DomainResources>> OpenDomainResources(
      const UtilDomain& domain) const override {
    if (IsRdm(*domain.info)) return nullptr;
    absl::StatusOr<const verbs::VerbsApi*> api = verbs::LoadVerbsApi();
    if (!api.ok()) return api.status();
    absl::StatusOr<std::unique_ptr<verbs::VerbsDomain>> opened =
        verbs::VerbsDomain::Open(*api, domain.name);
    if (!opened.ok()) return opened.status();
    return std::unique_ptr<DomainResources>(*std::move(opened));
  }

  int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                   uint64_t flags, void* context) const override {
    (void)flags;  // checked by the core: 0
    if (EnumValue(info->ep_attr->type) == FI_EP_DGRAM) {
      return verbs::OpenVerbsDgramEp(domain, info, ep, context);
    }
    if (EnumValue(info->ep_attr->type) != FI_EP_RDM) {
      return verbs::OpenVerbsMsgEp(domain, info, ep, context);
    }
    absl::StatusOr<InfoPtr> msg_info = MsgInfoFor(*info);
    if (!msg_info.ok()) {
      FI_WARN(c_provider(), FI_LOG_EP_CTRL, "fi_endpoint: %s\n",
              std::string(msg_info.status().message()).c_str());
      return ToFiErrno(msg_info.status());
    }
    return rxm::OpenRxmEp(domain, info, **msg_info, ep, context);
  }

  // Datagram domains name peers by UD endpoint names, in an AV of their
  // own (verbs_ud_av.h).
  AvOpen av_open(const UtilDomain& domain) const override {
    if (domain.info->ep_attr->type == FI_EP_DGRAM) return verbs::OpenVerbsUdAv;
    return nullptr;
  }

  int OpenPassiveEndpoint(fid_fabric* fabric, fi_info* info, fid_pep** pep,
                          void* context) const override {
    return verbs::OpenVerbsPassiveEp(fabric, info, pep, context);
  }

  // RDM endpoints share receive and transmit contexts as tcp's do: theirs
  // is the same data path (rxm_ep.h). MSG endpoints share receive contexts
  // over an SRQ (verbs_srx.h) and no transmit contexts.
  int OpenSharedRxContext(fid_domain* domain, fi_rx_attr* attr, fid_ep** srx,
                          void* context) const override {
    if (IsDgram(domain)) {
      return Provider::OpenSharedRxContext(domain, attr, srx, context);
    }
    if (!IsRdm(domain)) return verbs::OpenVerbsSrx(domain, attr, srx, context);
    return stream::OpenSharedRx(domain, attr, srx, context);
  }

  int OpenSharedTxContext(fid_domain* domain, fi_tx_attr* attr, fid_stx** stx,
                          void* context) const override {
    if (!IsRdm(domain)) {
      return Provider::OpenSharedTxContext(domain, attr, stx, context);
    }
    return stream::OpenSharedTx(domain, attr, stx, context);
  }

  int QueryAtomic(fid_domain* domain, fi_datatype datatype, fi_op op,
                  fi_atomic_attr* attr, uint64_t flags) const override {
    AtomicKind kind;
    switch (flags) {
      case 0:
        kind = AtomicKind::kWrite;
        break;
      case FI_FETCH_ATOMIC:
        kind = AtomicKind::kFetch;
        break;
      case FI_COMPARE_ATOMIC:
        kind = AtomicKind::kCompare;
        break;
      default:
        return -FI_EBADFLAGS;
    }
    if (attr == nullptr) return -FI_EINVAL;
    if (IsRdm(domain)) {
      // Atomics of RDM endpoints are the data path's, applied in software.
      return stream::QueryAtomic(datatype, op, attr, flags);
    }
    if (IsDgram(domain)) return -FI_EOPNOTSUPP;  // datagrams carry messages
    auto* util = FidCast<UtilDomain>(domain);
    int count = verbs::AtomicCount(datatype, op, kind,
                                   verbs::ToVerbsDomain(util)->atomics());
    if (count < 0) return count;
    attr->size = sizeof(uint64_t);
    attr->count = static_cast<size_t>(count);
    return 0;
  }

 private:
  // The device ports, listed once per process (not at every fi_getinfo);
  // null, with the reason logged, when there are none.
  const std::vector<verbs::PortDescription>* Ports() const {
    std::call_once(listed_, [this] { ports_ = verbs::ListPorts(&skipped_); });
    if (!ports_.ok()) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE,
             "no libibverbs (%s); verbs reports nothing\n",
             std::string(ports_.status().message()).c_str());
      return nullptr;
    }
    for (const std::string& why : skipped_) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE, "device left out: %s\n",
             why.c_str());
    }
    if (ports_->empty()) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE,
             "no RDMA devices (ibv_get_device_list found none); verbs "
             "reports nothing\n");
      return nullptr;
    }
    return &*ports_;
  }

  // The IP-addressed infos of `port`: its interface's addresses as the
  // IP providers treat them, named for the device and its fabric.
  absl::StatusOr<InfoList> DiscoverPortIp(
      const verbs::PortDescription& port,
      const GetInfoRequest& request) const {
    InfoTemplate rc;
    verbs::DescribeRc(port, &rc);
    verbs::FitToHints(request.hints, &rc);
    std::vector<IpInterface> interfaces;
    for (const IpAddress& address : port.ip_addresses) {
      IpInterface iface;
      iface.name = port.device;
      iface.address = address;
      iface.prefix_length = 0;
      iface.network = verbs::FabricName(port.gid);
      iface.loopback = false;
      interfaces.push_back(iface);
    }
    return DiscoverIp(*this, request, interfaces, {&rc.info});
  }

  static bool IsRdm(const fi_info& info) {
    return info.ep_attr != nullptr && info.ep_attr->type == FI_EP_RDM;
  }
  static bool IsDgram(fid_domain* domain) {
    return FidCast<UtilDomain>(domain)->info->ep_attr->type == FI_EP_DGRAM;
  }
  // Whether `domain` (one of this provider's) was opened for RDM endpoints.
  static bool IsRdm(fid_domain* domain) {
    return IsRdm(*FidCast<UtilDomain>(domain)->info);
  }

  // The MSG info the RDM endpoint opened with `rdm` connects through: the
  // same device and address.
  absl::StatusOr<InfoPtr> MsgInfoFor(const fi_info& rdm) const {
    InfoPtr hints = DupInfo(rdm);
    if (hints == nullptr) return FiError(FI_ENOMEM, "out of memory");
    // Discover reads the addressing and the queue sizes (the defaults).
    hints->ep_attr->type = FI_EP_MSG;
    hints->mode = 0;
    hints->tx_attr->size = hints->rx_attr->size = 0;
    hints->tx_attr->iov_limit = hints->rx_attr->iov_limit = 0;
    GetInfoRequest request;
    request.version = FI_VERSION(1, 18);
    request.hints = hints.get();
    absl::StatusOr<InfoList> found = Discover(request);
    if (!found.ok()) return found.status();
    for (const fi_info* info = found->head(); info != nullptr;
         info = info->next) {
      if (info->ep_attr->type == FI_EP_MSG &&
          strcmp(info->domain_attr->name, rdm.domain_attr->name) == 0) {
        InfoPtr msg = DupInfo(*info);
        if (msg == nullptr) return FiError(FI_ENOMEM, "out of memory");
        return msg;
      }
    }
    return FiError(FI_ENODATA, "no verbs MSG endpoint for the RDM "
                               "endpoint's address on its device");
  }

  InfoTemplate rc_;
  InfoTemplate rdm_;
  mutable std::once_flag listed_;
  mutable absl::StatusOr<std::vector<verbs::PortDescription>> ports_;
  mutable std::vector<std::string> skipped_;
};

}  // namespace

std::unique_ptr<Provider> MakeVerbsProvider() {
  return std::make_unique<VerbsProvider>();
}

}  // namespace fabric

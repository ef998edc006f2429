#include "fabric/providers/tcp/tcp_local_path.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/info.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/interfaces.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/peer_cq.h"

namespace fabric {
namespace tcp {
namespace {

// An fi_* call's result as a status naming the call.
absl::Status Check(int rc, const char* call) {
  if (rc == 0) return absl::OkStatus();
  return FiError(-rc, absl::StrCat(call, ": ", fi_strerror(-rc)));
}

// The shm endpoint's attributes: the tcp endpoint's own (caps, op flags,
// progress, threading, memory registration mode, authorization key), for
// the fabric and domain shm offers (its discovery also says when /dev/shm
// is too small). No source address: the domain's interfaces are shm's.
absl::StatusOr<InfoPtr> ShmInfo(const Provider& shm, const UtilEndpoint& tcp) {
  GetInfoRequest request;
  request.version = tcp.info->fabric_attr->api_version;
  absl::StatusOr<InfoList> offered = shm.Discover(request);
  if (!offered.ok()) return offered.status();
  if (offered->empty()) return FiError(FI_ENODATA, "shm offers nothing");
  const fi_info* defaults = offered->head();
  InfoPtr info = DupInfo(*tcp.info);
  if (info == nullptr) {
    return FiError(FI_ENOMEM, "cannot copy the endpoint's attributes");
  }
  const uint64_t local_only = ~static_cast<uint64_t>(FI_REMOTE_COMM);
  info->caps = (info->caps & local_only) | FI_LOCAL_COMM;
  info->domain_attr->caps =
      (info->domain_attr->caps & local_only) | FI_LOCAL_COMM;
  info->tx_attr->op_flags = tcp.tx_op_flags;
  info->rx_attr->op_flags = tcp.rx_op_flags;
  info->ep_attr->protocol = defaults->ep_attr->protocol;
  info->ep_attr->protocol_version = defaults->ep_attr->protocol_version;
  if (!SetString(&info->fabric_attr->name, defaults->fabric_attr->name) ||
      !SetString(&info->fabric_attr->prov_name,
                 defaults->fabric_attr->prov_name) ||
      !SetString(&info->domain_attr->name, defaults->domain_attr->name)) {
    return FiError(FI_ENOMEM, "cannot name the shm fabric");
  }
  info->fabric_attr->prov_version = defaults->fabric_attr->prov_version;
  for (void** addr : {&info->src_addr, &info->dest_addr}) {
    free(*addr);
    *addr = nullptr;
  }
  info->src_addrlen = 0;
  info->dest_addrlen = 0;
  return info;
}

// Names the endpoint `info` opens by `address`.
absl::Status SetSource(fi_info* info, const IpAddress& address) {
  std::vector<char> name = AddressBytes(address, info->addr_format);
  if (name.empty() || !SetAddress(&info->src_addr, &info->src_addrlen,
                                  name.data(), name.size())) {
    return FiError(FI_EINVAL, "cannot write the endpoint's address");
  }
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<TcpLocalPath> TcpLocalPath::Open(const Provider& shm,
                                                 stream::StreamEp* ep,
                                                 const IpAddress& address) {
  // (fi_enable has checked that an AV is bound.)
  if (ep->peer_srx != nullptr && !ep->peer_srx->msg_endpoints) {
    FI_INFO(ep->log(), FI_LOG_EP_CTRL,
            "peers on this host go over TCP: the endpoint takes its receives "
            "from another provider's SRX\n");
    return nullptr;
  }
  std::unique_ptr<TcpLocalPath> path(new TcpLocalPath);
  absl::Status status = path->OpenObjects(shm, ep, address);
  if (!status.ok()) {
    FI_INFO(ep->log(), FI_LOG_EP_CTRL,
            "peers on this host go over TCP: no shm endpoint: %s\n",
            std::string(status.message()).c_str());
    return nullptr;
  }
  FI_INFO(ep->log(), FI_LOG_EP_CTRL,
          "peers on this host go through shm (endpoint %s)\n",
          FormatAddrStr(address).c_str());
  return path;
}

absl::Status TcpLocalPath::OpenObjects(const Provider& shm,
                                       stream::StreamEp* tcp,
                                       const IpAddress& address) {
  const UtilEndpoint& util = tcp->util;
  av_ = util.av;
  paths_ = std::vector<std::atomic<uint8_t>>(kFastAddresses);
  absl::StatusOr<std::vector<IpInterface>> interfaces = ListIpInterfaces("");
  if (!interfaces.ok()) return interfaces.status();
  for (const IpInterface& interface : *interfaces) {
    host_addresses_.push_back(interface.address);
  }
  absl::StatusOr<InfoPtr> info = ShmInfo(shm, util);
  if (!info.ok()) return info.status();
  absl::Status status = Check(
      shm.OpenFabric(*(*info)->fabric_attr, &fabric_, nullptr), "fi_fabric");
  if (!status.ok()) return status;
  domain_context_ = {sizeof(domain_context_), &util.domain->domain_fid};
  status = Check(
      fi_domain2(fabric_, info->get(), &domain_, FI_PEER, &domain_context_),
      "fi_domain2");
  if (!status.ok()) return status;
  status = OpenCqs(util);
  if (!status.ok()) return status;
  fi_rx_attr rx_attr = *(*info)->rx_attr;
  rx_attr.op_flags = FI_PEER;
  // The receives are tcp's, or those of the shared receive context tcp
  // takes its own from.
  fid_peer_srx* owner = tcp->peer_srx != nullptr
                            ? tcp->peer_srx->owner
                            : stream::StreamEpOwnerSrx(tcp);
  srx_context_ = {sizeof(srx_context_), owner};
  status = Check(fi_srx_context(domain_, &rx_attr, &srx_, &srx_context_),
                 "fi_srx_context");
  if (!status.ok()) return status;
  status = SetSource(info->get(), address);
  if (!status.ok()) return status;
  status =
      Check(fi_endpoint(domain_, info->get(), &ep_, nullptr), "fi_endpoint");
  if (!status.ok()) return status;
  status = BindEndpoint(util);
  if (!status.ok()) return status;
  if (tcp->shared_tx != nullptr) {
    // Its transmits count in tcp's shared transmit context too.
    status = Check(fi_ep_bind(ep_, &tcp->shared_tx->stx_fid.fid, 0),
                   "fi_ep_bind(stx)");
    if (!status.ok()) return status;
  }
  return Check(fi_enable(ep_), "fi_enable");
}

// Binds the shm endpoint to tcp's AV and counters and to the peer CQs and
// SRX, with tcp's completion flags.
absl::Status TcpLocalPath::BindEndpoint(const UtilEndpoint& util) {
  uint64_t tx_flags =
      FI_TRANSMIT | (util.tx_selective ? FI_SELECTIVE_COMPLETION : 0);
  uint64_t rx_flags =
      FI_RECV | (util.rx_selective ? FI_SELECTIVE_COMPLETION : 0);
  absl::Status status =
      Check(fi_ep_bind(ep_, &av_->av_fid.fid, 0), "fi_ep_bind(av)");
  if (status.ok() && tx_cq_ != nullptr) {
    status = Check(fi_ep_bind(ep_, &tx_cq_->fid, tx_flags), "fi_ep_bind(cq)");
  }
  if (status.ok() && rx_cq_ != nullptr) {
    status = Check(fi_ep_bind(ep_, &rx_cq_->fid, rx_flags), "fi_ep_bind(cq)");
  }
  for (int kind = 0; status.ok() && kind < kCntrKinds; ++kind) {
    if (UtilCntr* cntr = util.cntrs[kind]; cntr != nullptr) {
      status = Check(fi_ep_bind(ep_, &cntr->cntr_fid.fid, kCntrBindFlag[kind]),
                     "fi_ep_bind(cntr)");
    }
  }
  if (!status.ok()) return status;
  return Check(fi_ep_bind(ep_, &srx_->fid, 0), "fi_ep_bind(srx)");
}

// A peer CQ over each of tcp's CQs: tx_cq_ over the transmit CQ, rx_cq_
// over the receive CQ (the same object when tcp's two are one).
absl::Status TcpLocalPath::OpenCqs(const UtilEndpoint& tcp) {
  auto open = [this](UtilCq* owner, fid_cq** cq, fi_peer_cq_context* context) {
    *context = {sizeof(fi_peer_cq_context), UtilCqOwnerFid(owner)};
    fi_cq_attr attr = {};
    attr.format = owner->format;
    attr.flags = FI_PEER;
    return Check(fi_cq_open(domain_, &attr, cq, context), "fi_cq_open");
  };
  if (tcp.tx_cq != nullptr) {
    absl::Status status = open(tcp.tx_cq, &tx_cq_, &tx_cq_context_);
    if (!status.ok()) return status;
  }
  if (tcp.rx_cq == nullptr) return absl::OkStatus();
  if (tcp.rx_cq == tcp.tx_cq) {
    rx_cq_ = tx_cq_;
    return absl::OkStatus();
  }
  return open(tcp.rx_cq, &rx_cq_, &rx_cq_context_);
}

TcpLocalPath::~TcpLocalPath() {
  for (fid_ep* ep : {ep_, srx_}) {
    if (ep != nullptr) fi_close(&ep->fid);
  }
  if (rx_cq_ != nullptr && rx_cq_ != tx_cq_) fi_close(&rx_cq_->fid);
  if (tx_cq_ != nullptr) fi_close(&tx_cq_->fid);
  if (domain_ != nullptr) fi_close(&domain_->fid);
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
}

bool TcpLocalPath::IsLocal(const IpAddress& peer) const {
  if (peer.IsWildcard()) return true;
  for (const IpAddress& own : host_addresses_) {
    if (own.SameHost(peer)) return true;
  }
  return false;
}

fid_ep* TcpLocalPath::Via(fi_addr_t dest) {
  if (dest < paths_.size()) {
    uint8_t known = paths_[dest].load(std::memory_order_relaxed);
    if (known != kUndecided) return known == kShm ? ep_ : nullptr;
  }
  MutexLock<Mutex> lock(mutex_);
  if (dest >= paths_.size()) {
    auto known = paths_beyond_.find(dest);
    if (known != paths_beyond_.end()) {
      return known->second == kShm ? ep_ : nullptr;
    }
  }
  absl::StatusOr<IpAddress> peer = AvLookupIp(av_, dest);
  // Not remembered: the transmit over TCP fails for an address the AV
  // does not hold.
  if (!peer.ok()) return nullptr;
  Path path = IsLocal(*peer) ? kShm : kTcp;
  Decide(dest, path);
  return path == kShm ? ep_ : nullptr;
}

void TcpLocalPath::Refused(fi_addr_t dest) {
  MutexLock<Mutex> lock(mutex_);
  Decide(dest, kTcp);
}

void TcpLocalPath::Decide(fi_addr_t dest, Path path) {
  if (dest < paths_.size()) {
    paths_[dest].store(path, std::memory_order_relaxed);
  } else {
    paths_beyond_[dest] = path;
  }
}

}  // namespace tcp
}  // namespace fabric

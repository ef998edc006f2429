#include "fabric/providers/udp/udp_endpoint.h"

#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/address.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/udp/udp_cm.h"
#include "fabric/providers/udp/udp_limits.h"
#include "fabric/providers/udp/udp_msg.h"
#include "fabric/providers/udp/udp_socket.h"
#include "fabric/providers/util/endpoint_tables.h"
#include "fabric/providers/util/fid_ops.h"

namespace fabric {
namespace {

// What udp endpoints can do: fi_info caps outside these are refused.
constexpr uint64_t kUdpCaps =
    FI_MSG | FI_SEND | FI_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM;

// Room for any UDP datagram but an IPv6 jumbogram (65535 minus the UDP
// header); a longer one would complete truncated.
constexpr size_t kReceiveBounceSize = 65535 - 8;

absl::Status CheckInfo(const fi_info& info) {
  if (info.ep_attr == nullptr || info.tx_attr == nullptr ||
      info.rx_attr == nullptr) {
    return FiError(FI_EINVAL,
                   "fi_endpoint: info needs ep_attr, tx_attr and rx_attr");
  }
  if (EnumValue(info.ep_attr->type) != FI_EP_DGRAM) {
    return FiError(FI_EINVAL, "fi_endpoint: udp endpoints are FI_EP_DGRAM");
  }
  if ((info.caps & ~kUdpCaps) != 0) {
    return FiError(FI_ENODATA,
                   absl::StrCat("fi_endpoint: udp does not offer caps 0x",
                                absl::Hex(info.caps & ~kUdpCaps)));
  }
  switch (info.addr_format) {
    case FI_FORMAT_UNSPEC:
    case FI_SOCKADDR:
    case FI_SOCKADDR_IN:
    case FI_SOCKADDR_IN6:
    case FI_ADDR_STR:
      break;
    default:
      return FiError(FI_EINVAL,
                     absl::StrCat("fi_endpoint: udp does not use addr_format ",
                                  info.addr_format));
  }
  const fi_tx_attr& tx = *info.tx_attr;
  const fi_rx_attr& rx = *info.rx_attr;
  if (tx.size == 0 || rx.size == 0 || tx.iov_limit == 0 || rx.iov_limit == 0 ||
      tx.iov_limit > kUdpIovLimit || rx.iov_limit > kUdpIovLimit) {
    return FiError(
        FI_EINVAL,
        absl::StrCat(
            "fi_endpoint: queue sizes must be at least 1 and iov_limit 1 to ",
            kUdpIovLimit));
  }
  if (info.ep_attr->max_msg_size > kUdpMaxMsgSize ||
      tx.inject_size > kUdpMaxMsgSize) {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_endpoint: a UDP datagram carries at most ",
                                kUdpMaxMsgSize, " bytes"));
  }
  return absl::OkStatus();
}

// Where the socket binds: info->src_addr, or the wildcard address of the
// family addr_format names.
absl::StatusOr<IpAddress> SourceAddress(const fi_info& info) {
  if (info.src_addr != nullptr) {
    uint32_t format = info.addr_format == FI_FORMAT_UNSPEC
                          ? uint32_t{FI_SOCKADDR}
                          : info.addr_format;
    return IpFromUser(format, info.src_addr, info.src_addrlen);
  }
  sockaddr_storage wildcard = {};
  wildcard.ss_family = info.addr_format == FI_SOCKADDR_IN6 ? AF_INET6 : AF_INET;
  return IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&wildcard),
                                 wildcard.ss_family == AF_INET6
                                     ? sizeof(sockaddr_in6)
                                     : sizeof(sockaddr_in));
}

// The transmit traffic class, else the domain's.
uint32_t TrafficClass(const fi_info& info, const UtilDomain& domain) {
  if (info.tx_attr->tclass != FI_TC_UNSPEC) return info.tx_attr->tclass;
  return domain.info->domain_attr->tclass;
}

int Enable(UdpEndpoint* ep) {
  {
    MutexLock<OptionalMutex> lock(ep->util.mutex);
    if (ep->util.enabled.load()) {
      return UdpFail(*ep, FI_LOG_EP_CTRL,
                     FiError(FI_EOPBADSTATE, "fi_enable: already enabled"));
    }
    if (int rc = CheckEnable(ep->util); rc != 0) return rc;
    ep->util.enabled.store(true);
  }
  // Outside the endpoint's lock: the engine holds its own while it calls
  // Progress(), which takes the endpoint's.
  ep->util.domain->progress->Add(&ep->progress);
  return 0;
}

int CloseEp(fid* object) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  if (ep->util.enabled.load()) {
    ep->util.domain->progress->Remove(&ep->progress);
  }
  {
    MutexLock<OptionalMutex> lock(ep->util.mutex);
    // Receives still posted are dropped without completions.
    for (size_t i = 0; i < ep->receives.size(); ++i) {
      if (ep->receives[i].reserved) CqUnreserve(ep->util.rx_cq);
    }
  }
  ReleaseUtilEndpoint(&ep->util);
  close(ep->fd);
  delete ep;
  return 0;
}

int BindEp(fid* object, fid* bound, uint64_t flags) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  return BindUtilEndpoint(&ep->util, bound, flags);
}

int ControlEp(fid* object, int command, void* arg) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  if (command == FI_ENABLE) return Enable(ep);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  int rc = ControlUtilEndpoint(&ep->util, command, arg);
  if (rc == -FI_ENOSYS) {
    FI_WARN(UdpLog(*ep), FI_LOG_EP_CTRL,
            "fi_control: command %d is not supported\n", command);
  }
  return rc;
}

// fi_cancel: a posted receive completes with FI_ECANCELED.
ssize_t CancelEp(fid* object, void* context) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  size_t i = 0;
  while (i < ep->receives.size() && ep->receives[i].context != context) ++i;
  if (i == ep->receives.size()) return -FI_ENOENT;
  bool reserved = ep->receives[i].reserved;
  ep->receives.erase(i);
  fi_cq_tagged_entry entry = {};
  entry.op_context = context;
  entry.flags = FI_RECV | FI_MSG;
  ReportError(&ep->util, ep->util.rx_cq, reserved, entry, FI_ECANCELED, 0,
              kRecvCntr);
  return 0;
}

absl::Status NotEnabled(const char* call) {
  return FiError(FI_EOPBADSTATE,
                 absl::StrCat(call, ": the endpoint is not enabled"));
}

ssize_t RxSizeLeft(fid_ep* ep_fid) {
  UdpEndpoint* ep = ToUdpEndpoint(ep_fid);
  if (!ep->util.enabled.load()) {
    return UdpFail(*ep, FI_LOG_EP_DATA, NotEnabled("fi_rx_size_left"));
  }
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  return static_cast<ssize_t>(ep->util.info->rx_attr->size -
                              ep->receives.size());
}

// Sends complete inside the call, so the whole queue is always free.
ssize_t TxSizeLeft(fid_ep* ep_fid) {
  UdpEndpoint* ep = ToUdpEndpoint(ep_fid);
  if (!ep->util.enabled.load()) {
    return UdpFail(*ep, FI_LOG_EP_DATA, NotEnabled("fi_tx_size_left"));
  }
  return static_cast<ssize_t>(ep->util.info->tx_attr->size);
}

fi_ops kUdpFidOps =
    MakeFidOps({.close = CloseEp, .bind = BindEp, .control = ControlEp});

fi_ops_ep UdpEpOps() {
  fi_ops_ep ops = UtilEndpointOps(CancelEp);
  ops.rx_size_left = RxSizeLeft;
  ops.tx_size_left = TxSizeLeft;
  return ops;
}
fi_ops_ep kUdpEpOps = UdpEpOps();

absl::StatusOr<std::unique_ptr<UdpEndpoint>> CreateEndpoint(UtilDomain* domain,
                                                            const fi_info& info,
                                                            void* context) {
  FABRIC_RETURN_IF_ERROR(CheckInfo(info));
  absl::StatusOr<IpAddress> source = SourceAddress(info);
  if (!source.ok()) {
    return FiError(FI_EINVAL, absl::StrCat("fi_endpoint: info->src_addr: ",
                                           source.status().message()));
  }
  uint32_t tclass = TrafficClass(info, *domain);
  absl::StatusOr<int> fd = OpenUdpSocket(*source, tclass);
  if (!fd.ok()) return fd.status();

  auto ep = std::make_unique<UdpEndpoint>();
  ep->fd = *fd;
  ep->tclass = tclass;
  ep->util.ep_fid = {};
  InstallEndpointTables(
      &ep->util.ep_fid,
      {.ops = &kUdpEpOps, .cm = &kUdpCmOps, .msg = &kUdpMsgOps});
  absl::Status status =
      InitUtilEndpoint(&ep->util, domain, &info, context, &kUdpFidOps);
  if (!status.ok()) {
    close(ep->fd);
    return status;
  }
  fi_info& own = *ep->util.info;
  if (own.addr_format == FI_FORMAT_UNSPEC) {
    own.addr_format =
        source->family() == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
  }
  ep->report_source = ((own.caps | own.rx_attr->caps) & FI_SOURCE) != 0;
  // Not yet seen by any other thread: the lock only satisfies the analysis.
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  ep->send_bounce.resize(kUdpMaxMsgSize);
  ep->receive_bounce.resize(kReceiveBounceSize);
  return ep;
}

}  // namespace

bool UseDirectly(const UdpEndpoint& ep, const AppBuffer& buffer,
                 msghdr* message) {
  if (buffer.size() > kUdpIovLimit ||
      !DirectlyAccessible(ep.util.domain->copier, buffer)) {
    return false;
  }
  message->msg_iovlen = 0;
  for (const AppBufferPiece& piece : buffer) {
    message->msg_iov[message->msg_iovlen++] = piece.iov;
  }
  return true;
}

int UdpFail(const UdpEndpoint& ep, fi_log_subsys subsys,
            const absl::Status& status) {
  int rc = ToFiErrno(status);
  if (rc == -FI_EAGAIN) {
    FI_DBG(UdpLog(ep), subsys, "%s\n", std::string(status.message()).c_str());
  } else {
    FI_WARN(UdpLog(ep), subsys, "%s\n", std::string(status.message()).c_str());
  }
  return rc;
}

int OpenUdpEndpoint(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                    void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  absl::StatusOr<std::unique_ptr<UdpEndpoint>> ep =
      CreateEndpoint(domain, *info, context);
  if (!ep.ok()) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_EP_CTRL, "%s\n",
            std::string(ep.status().message()).c_str());
    return ToFiErrno(ep.status());
  }
  *ep_out = &(*ep).release()->util.ep_fid;
  return 0;
}

}  // namespace fabric

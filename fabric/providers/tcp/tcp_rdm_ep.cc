#include "fabric/providers/tcp/tcp_rdm_ep.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/tcp/tcp_socket.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace tcp {
namespace {

constexpr int kBacklog = 1024;
constexpr int kMaxEvents = 64;

TcpRdmEp* ToTcpRdmEp(fid* object) {
  return reinterpret_cast<TcpRdmEp*>(object);
}

int Fail(const TcpRdmEp& ep, const absl::Status& status) {
  FI_WARN(ep.log(), FI_LOG_EP_CTRL, "%s\n",
          std::string(status.message()).c_str());
  return ToFiErrno(status);
}

void Watch(TcpRdmEp* ep, int op, int fd, uint32_t events) {
  epoll_event event = {};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(ep->epoll_fd, op, fd, &event);
}

TcpLink* AddLink(TcpRdmEp* ep, int fd, fi_addr_t peer) {
  ep->links.push_back(std::make_unique<TcpLink>(&ep->base, fd, peer));
  TcpLink* link = ep->links.back().get();
  ep->link_by_fd[fd] = link;
  Watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN);
  return link;
}

// The hello of a new connection: our listening address, as a sockaddr.
absl::Status SendHello(TcpRdmEp* ep, int fd) {
  absl::StatusOr<IpAddress> name = LocalAddress(ep->listen_fd);
  if (!name.ok()) return name.status();
  return SendCm(fd, CmType::kConnRequest, AuthKeyOf(*ep->base.util.info),
                name->sockaddr_ptr(), name->length());
}

// A finished hello: the connection becomes a link from the peer it names.
void AcceptHello(TcpRdmEp* ep, RdmIncoming& in) {
  const std::vector<char>& data = in.reader.data();
  absl::StatusOr<IpAddress> address =
      in.reader.type() != CmType::kConnRequest
          ? FiError(FI_EIO, "not a hello")
      : in.reader.key() != AuthKeyOf(*ep->base.util.info)
          ? FiError(FI_EKEYREJECTED, "another authorization key")
          : IpFromUser(FI_SOCKADDR, data.data(), data.size());
  Watch(ep, EPOLL_CTL_DEL, in.fd, 0);
  if (!address.ok()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "refusing a connection: %s\n",
            std::string(address.status().message()).c_str());
    close(in.fd);
    return;
  }
  fi_addr_t peer = AvFindIp(ep->base.util.av, *address);
  TcpLink* link = AddLink(ep, in.fd, peer);
  size_t len = 0;
  uint32_t format = ep->base.util.info->addr_format;
  CopyAddressOut(*address, format, nullptr, &len);
  link->peer_name.resize(len);
  if (CopyAddressOut(*address, format, link->peer_name.data(), &len) != 0) {
    link->peer_name.clear();
  }
  if (peer != FI_ADDR_NOTAVAIL && ep->link_to.count(peer) == 0) {
    ep->link_to[peer] = link;
  }
}

void AcceptConnections(TcpRdmEp* ep) {
  for (int fd; (fd = AcceptSocket(ep->listen_fd, ep->log())) >= 0;) {
    ep->incoming.push_back(RdmIncoming{fd, CmReader()});
    Watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN);
  }
}

void ProgressHandshake(TcpRdmEp* ep, int fd) {
  auto it = std::find_if(ep->incoming.begin(), ep->incoming.end(),
                         [fd](const RdmIncoming& in) { return in.fd == fd; });
  if (it == ep->incoming.end()) return;
  CmReader::Result result = it->reader.Read(fd);
  if (result == CmReader::kPending) return;
  if (result == CmReader::kDone) {
    AcceptHello(ep, *it);
  } else {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "dropping a connection: %s\n",
            std::string(it->reader.error().message()).c_str());
    Watch(ep, EPOLL_CTL_DEL, fd, 0);
    close(fd);
  }
  ep->incoming.erase(it);
}

int CloseRdmEp(fid* object) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  if (ep->registered) ep->engine()->Remove(&ep->events);
  UnreserveReceives(&ep->base);
  for (const auto& link : ep->links) link->Unreserve();
  ep->links.clear();  // closes their sockets
  ep->closed.clear();
  for (RdmIncoming& in : ep->incoming) close(in.fd);
  close(ep->listen_fd);
  close(ep->epoll_fd);
  ReleaseUtilEndpoint(&ep->base.util);
  delete ep;
  return 0;
}

int BindRdmEp(fid* object, fid* bound, uint64_t flags) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  std::lock_guard<OptionalMutex> lock(ep->base.util.mutex);
  return BindUtilEndpoint(&ep->base.util, bound, flags);
}

int Enable(TcpRdmEp* ep) {
  if (ep->base.util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->base.util); rc != 0) return rc;
  if (listen(ep->listen_fd, kBacklog) != 0) {
    return Fail(*ep, FiError(errno, absl::StrCat("listen: ", strerror(errno))));
  }
  ep->base.util.enabled.store(true);
  ep->registered = true;
  ep->engine()->Add(&ep->events);
  return 0;
}

int ControlRdmEp(fid* object, int command, void* arg) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  std::lock_guard<OptionalMutex> lock(ep->base.util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  return ControlUtilEndpoint(&ep->base.util, command, arg);
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  if (addrlen == nullptr) {
    return Fail(*ep, FiError(FI_EINVAL, "fi_getname: addrlen is NULL"));
  }
  absl::StatusOr<IpAddress> name = LocalAddress(ep->listen_fd);
  if (!name.ok()) return Fail(*ep, name.status());
  return CopyAddressOut(*name, ep->base.util.info->addr_format, addr, addrlen);
}

int SetName(fid* object, void* addr, size_t addrlen) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  std::lock_guard<OptionalMutex> lock(ep->base.util.mutex);
  if (ep->base.util.enabled.load()) {
    return Fail(*ep, FiError(FI_EOPBADSTATE,
                             "fi_setname: the endpoint is already enabled"));
  }
  absl::StatusOr<IpAddress> address =
      IpFromUser(ep->base.util.info->addr_format, addr, addrlen);
  absl::StatusOr<int> fd =
      address.ok() ? BoundSocket(*address) : address.status();
  if (!fd.ok()) return Fail(*ep, fd.status());
  Watch(ep, EPOLL_CTL_DEL, ep->listen_fd, 0);
  close(ep->listen_fd);
  ep->listen_fd = *fd;
  Watch(ep, EPOLL_CTL_ADD, ep->listen_fd, EPOLLIN);
  return 0;
}

fi_ops kRdmEpFidOps = MakeFidOps(
    {.close = CloseRdmEp, .bind = BindRdmEp, .control = ControlRdmEp});
fi_ops_cm kRdmCmOps = ConnectionlessCmOps(SetName, GetName);

// Where the endpoint listens: info->src_addr, else any address of the
// format's family.
absl::StatusOr<IpAddress> ListenAddress(const fi_info& info) {
  if (info.src_addr != nullptr) {
    return IpFromUser(info.addr_format, info.src_addr, info.src_addrlen);
  }
  sockaddr_in any = {};
  any.sin_family = AF_INET;
  return IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&any),
                                 sizeof(any));
}

}  // namespace

TcpLink* TcpRdmEpEvents::LinkFor(fi_addr_t dest, int* error) {
  TcpRdmEp* ep = ep_;
  auto known = ep->link_to.find(dest);
  if (known != ep->link_to.end()) return known->second;
  absl::StatusOr<IpAddress> peer = AvLookupIp(ep->base.util.av, dest);
  absl::StatusOr<int> fd =
      peer.ok() ? StartConnect(*peer, std::nullopt,
                               ep->base.util.domain->info->domain_attr->tclass)
                : peer.status();
  absl::Status status = fd.ok() ? FinishConnect(*fd, kConnectTimeoutMs)
                                : fd.status();
  if (status.ok()) status = SendHello(ep, *fd);
  if (!status.ok()) {
    if (fd.ok()) close(*fd);
    *error = Fail(*ep, status);
    return nullptr;
  }
  TcpLink* link = AddLink(ep, *fd, dest);
  ep->link_to[dest] = link;
  return link;
}

void TcpRdmEpEvents::LinkClosed(TcpLink* link, int error) {
  TcpRdmEp* ep = ep_;
  if (error != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "connection to peer %llu lost: %s\n",
            static_cast<unsigned long long>(link->peer), fi_strerror(-error));
  }
  for (auto it = ep->link_to.begin(); it != ep->link_to.end();) {
    it = it->second == link ? ep->link_to.erase(it) : std::next(it);
  }
  int fd = link->connection.fd();
  Watch(ep, EPOLL_CTL_DEL, fd, 0);
  ep->link_by_fd.erase(fd);
  // The link is inside its own callback: it is freed at the next progress.
  auto owned = std::find_if(
      ep->links.begin(), ep->links.end(),
      [link](const std::unique_ptr<TcpLink>& l) { return l.get() == link; });
  ep->closed.push_back(std::move(*owned));
  ep->links.erase(owned);
}

void TcpRdmEpEvents::LinkBacklog(TcpLink* link, bool backlogged) {
  Watch(ep_, EPOLL_CTL_MOD, link->connection.fd(),
        EPOLLIN | (backlogged ? static_cast<uint32_t>(EPOLLOUT) : 0u));
}

void TcpRdmEpEvents::ReceivePosted() {
  // Index loop: a link may close (and leave `links`) while it progresses.
  for (size_t i = 0; i < ep_->links.size(); ++i) {
    TcpLink* link = ep_->links[i].get();
    if (link->connection.stalled()) link->connection.Progress();
  }
}

void TcpRdmEpEvents::Progress() {
  TcpRdmEp* ep = ep_;
  std::lock_guard<OptionalMutex> lock(ep->base.util.mutex);
  ep->closed.clear();
  epoll_event events[kMaxEvents];
  int n = epoll_wait(ep->epoll_fd, events, kMaxEvents, 0);
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == ep->listen_fd) {
      AcceptConnections(ep);
      continue;
    }
    auto link = ep->link_by_fd.find(fd);
    if (link != ep->link_by_fd.end()) {
      link->second->connection.Progress();
    } else {
      ProgressHandshake(ep, fd);
    }
  }
}

int TcpRdmEpEvents::progress_fd() const { return ep_->epoll_fd; }

bool TcpRdmEpEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

int OpenTcpRdmEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                 void* context) {
  UtilDomain* domain = reinterpret_cast<UtilDomain*>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  absl::StatusOr<IpAddress> address = ListenAddress(*info);
  absl::StatusOr<int> listen_fd =
      address.ok() ? BoundSocket(*address) : address.status();
  if (!listen_fd.ok()) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: %s\n",
            std::string(listen_fd.status().message()).c_str());
    return ToFiErrno(listen_fd.status());
  }
  auto ep = std::make_unique<TcpRdmEp>();
  ep->listen_fd = *listen_fd;
  ep->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  ep->base.util.ep_fid = {};
  absl::Status status =
      InitUtilEndpoint(&ep->base.util, domain, info, context, &kRdmEpFidOps);
  if (!status.ok() || ep->epoll_fd < 0) {
    close(ep->listen_fd);
    if (ep->epoll_fd >= 0) close(ep->epoll_fd);
    if (status.ok()) {
      ReleaseUtilEndpoint(&ep->base.util);
      status = FiError(FI_EMFILE, "fi_endpoint: epoll_create1 failed");
    }
    FI_WARN(log, FI_LOG_EP_CTRL, "%s\n", std::string(status.message()).c_str());
    return ToFiErrno(status);
  }
  Watch(ep.get(), EPOLL_CTL_ADD, ep->listen_fd, EPOLLIN);
  fid_ep& ep_fid = ep->base.util.ep_fid;
  ep_fid.ops = &kTcpEpOps;
  ep_fid.cm = &kRdmCmOps;
  ep_fid.msg = &kTcpMsgOps;
  ep_fid.tagged = &kTcpTaggedOps;
  ep_fid.rma = &kTcpRmaOps;
  ep_fid.atomic = &kTcpAtomicOps;
  ep_fid.collective = &kNoCollectiveOps;
  ep->base.directed_recv = (info->caps & FI_DIRECTED_RECV) != 0;
  ep->base.source_err = (info->caps & FI_SOURCE_ERR) != 0;
  *ep_out = &ep.release()->base.util.ep_fid;
  return 0;
}

}  // namespace tcp
}  // namespace fabric

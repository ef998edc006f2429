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
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/tcp/tcp_socket.h"
#include "fabric/providers/tcp/tcp_socket_stream.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace tcp {
namespace {

constexpr int kBacklog = 1024;
constexpr int kMaxEvents = 64;

TcpRdmEp* ToTcpRdmEp(fid* object) { return FidCast<TcpRdmEp>(object); }

int Fail(const TcpRdmEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

// A pass polls the sockets with poll(2) while there are at most this many
// (cheaper than epoll_wait), with the epoll set beyond.
constexpr size_t kPollLimit = 8;
// While the endpoint has no connection, only every this many passes looks
// at it: a pass then costs no lock and no system call, which is what a
// polling loop over peers on this host (through shm) feels. A new
// connection waits some tens of microseconds more for it.
constexpr uint32_t kIdleListenPollPasses = 1024;

// Passes without a wait after which few sockets leave the epoll set.
constexpr uint32_t kBusyPasses = 256;

// A pass over the listening socket and at most this many connections (no
// handshake under way) reads the connections without polling them first:
// a recv that finds nothing costs about what a poll does, and a message
// that came is then taken by one system call instead of two. The listening
// socket is polled on one such pass in kListenPollPasses.
constexpr size_t kDirectReadLinks = 2;
constexpr uint32_t kListenPollPasses = 64;

void EpollControl(TcpRdmEp* ep, int op, int fd, uint32_t events) {
  epoll_event event = {};
  event.events = events;
  event.data.fd = fd;
  epoll_ctl(ep->epoll_fd, op, fd, &event);
}

// Puts the watched sockets into the epoll set or takes them out.
void ArmEpoll(TcpRdmEp* ep, bool armed) {
  if (ep->epoll_armed == armed) return;
  ep->epoll_armed = armed;
  for (const pollfd& watched : ep->watched) {
    EpollControl(ep, armed ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, watched.fd,
                 static_cast<uint16_t>(watched.events));
  }
}

// Registers, changes (EPOLLIN/EPOLLOUT, which poll(2) spells alike) or
// drops what a pass asks about `fd`.
void Watch(TcpRdmEp* ep, int op, int fd, uint32_t events) {
  if (ep->epoll_armed) EpollControl(ep, op, fd, events);
  auto it = std::find_if(ep->watched.begin(), ep->watched.end(),
                         [fd](const pollfd& p) { return p.fd == fd; });
  if (op == EPOLL_CTL_DEL) {
    if (it != ep->watched.end()) ep->watched.erase(it);
  } else if (it != ep->watched.end()) {
    it->events = static_cast<short>(events);
  } else {
    ep->watched.push_back(pollfd{fd, static_cast<short>(events), 0});
  }
  // Passes over more sockets than poll(2) takes use the set.
  if (ep->watched.size() > kPollLimit) ArmEpoll(ep, true);
}

stream::Link* AddLink(TcpRdmEp* ep, int fd, fi_addr_t peer, uint32_t events) {
  stream::Link* link = ep->links.Add(std::make_unique<stream::Link>(
      &ep->base, std::make_unique<SocketStream>(fd), peer));
  ep->link_by_fd[fd] = link;
  Watch(ep, EPOLL_CTL_ADD, fd, events);
  ep->has_sockets.store(true, std::memory_order_release);
  return link;
}

// A handshake message with the endpoint's authorization key.
absl::Status SendHandshake(const TcpRdmEp& ep, int fd, CmType type,
                           const void* data, size_t len) {
  return SendCm(fd, type, AuthKeyOf(*ep.base.util.info), data, len);
}

// Answers a hello with kReject (the peer's transmits fail) and closes it.
void RefuseHello(TcpRdmEp* ep, int fd, const absl::Status& why) {
  FI_WARN(ep->log(), FI_LOG_EP_CTRL, "refusing a connection: %s\n",
          std::string(why.message()).c_str());
  absl::Status sent = SendHandshake(*ep, fd, CmType::kReject, nullptr, 0);
  if (!sent.ok()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "sending the refusal: %s\n",
            std::string(sent.message()).c_str());
  }
  close(fd);
}

// Answers the hello on `fd` (from `address`, the AV's `peer`) with kAccept
// and makes the connection a link; null when the answer fails.
stream::Link* AcceptPeer(TcpRdmEp* ep, int fd, const IpAddress& address,
                         fi_addr_t peer) {
  absl::Status sent = SendHandshake(*ep, fd, CmType::kAccept, nullptr, 0);
  if (!sent.ok()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "accepting a connection: %s\n",
            std::string(sent.message()).c_str());
    close(fd);
    return nullptr;
  }
  stream::Link* link = AddLink(ep, fd, peer, EPOLLIN);
  link->peer_name = AddressBytes(address, ep->base.util.info->addr_format);
  if (peer != FI_ADDR_NOTAVAIL && ep->links.to.count(peer) == 0) {
    ep->links.to[peer] = link;
  }
  return link;
}

// `winner` takes over from `loser`, an unanswered outgoing link to the
// same peer: its queued transmits, and the place transmits go.
void ReplaceLink(TcpRdmEp* ep, stream::Link* loser, stream::Link* winner) {
  stream::MoveQueuedTx(loser, winner);
  loser->connection.Close(0);  // nothing of its own left to fail
  ep->links.to[winner->peer] = winner;
}

// Byte-wise order of two listening addresses: the tie-break of
// simultaneous connects, the same on both sides.
int CompareAddresses(const IpAddress& a, const IpAddress& b) {
  if (a.length() != b.length()) return a.length() < b.length() ? -1 : 1;
  return memcmp(a.sockaddr_ptr(), b.sockaddr_ptr(), a.length());
}

// A hello from the peer that `own`, our unanswered connection, goes to:
// the connection made by the smaller listening address survives.
void ResolveCollision(TcpRdmEp* ep, int fd, const IpAddress& address,
                      stream::Link* own) {
  if (CompareAddresses(ep->listen_address, address) < 0) {
    RdmHandshake& handshake = ep->handshakes[own];
    if (handshake.rival_fd >= 0) {
      FI_WARN(ep->log(), FI_LOG_EP_CTRL,
              "a second hello from peer %llu: dropping the first\n",
              static_cast<unsigned long long>(own->peer));
      close(handshake.rival_fd);
    }
    handshake.rival_fd = fd;
    handshake.rival_address = address;
    return;
  }
  stream::Link* link = AcceptPeer(ep, fd, address, own->peer);
  if (link != nullptr) ReplaceLink(ep, own, link);
}

// Our unanswered connection to `peer`, or null.
stream::Link* UnansweredLinkTo(TcpRdmEp* ep, fi_addr_t peer) {
  auto known = ep->links.to.find(peer);
  if (known == ep->links.to.end()) return nullptr;
  return ep->handshakes.count(known->second) != 0 ? known->second : nullptr;
}

// A finished hello: the connection becomes a link from the peer it names.
void TakeHello(TcpRdmEp* ep, RdmIncoming& in) {
  const std::vector<char>& data = in.reader.data();
  absl::StatusOr<IpAddress> address =
      in.reader.type() != CmType::kConnRequest
          ? FiError(FI_EIO, "not a hello")
      : in.reader.key() != AuthKeyOf(*ep->base.util.info)
          ? FiError(FI_EKEYREJECTED, "another authorization key")
          : IpFromUser(FI_SOCKADDR, data.data(), data.size());
  Watch(ep, EPOLL_CTL_DEL, in.fd, 0);
  if (!address.ok()) {
    RefuseHello(ep, in.fd, address.status());
    return;
  }
  fi_addr_t peer = AvFindIp(ep->base.util.av, *address);
  stream::Link* own =
      peer == FI_ADDR_NOTAVAIL ? nullptr : UnansweredLinkTo(ep, peer);
  // Equal addresses: the endpoint connected to itself.
  if (own != nullptr && CompareAddresses(ep->listen_address, *address) != 0) {
    ResolveCollision(ep, in.fd, *address, own);
    return;
  }
  AcceptPeer(ep, in.fd, *address, peer);
}

// The connect or handshake of `link` failed: its transmits go to the
// peer's own connection when one waits, else fail.
void FailHandshake(TcpRdmEp* ep, stream::Link* link, const absl::Status& why) {
  FI_WARN(ep->log(), FI_LOG_EP_CTRL, "connecting to peer %llu: %s\n",
          static_cast<unsigned long long>(link->peer),
          std::string(why.message()).c_str());
  RdmHandshake& handshake = ep->handshakes[link];
  if (handshake.rival_fd >= 0) {
    int fd = std::exchange(handshake.rival_fd, -1);
    stream::Link* rival =
        AcceptPeer(ep, fd, handshake.rival_address, link->peer);
    if (rival != nullptr) {
      ReplaceLink(ep, link, rival);
      return;
    }
  }
  link->connection.Close(ToFiErrno(why) == -FI_ETIMEDOUT ? -FI_ETIMEDOUT
                                                          : -FI_ECONNREFUSED);
}

// Fails the outgoing connections whose TCP connect is overdue.
void ExpireHandshakes(TcpRdmEp* ep) {
  auto now = std::chrono::steady_clock::now();
  std::vector<stream::Link*> overdue;
  for (const auto& [link, handshake] : ep->handshakes) {
    if (!handshake.hello_sent && now >= handshake.deadline) {
      overdue.push_back(link);
    }
  }
  for (stream::Link* link : overdue) {
    FailHandshake(ep, link,
                  FiError(FI_ETIMEDOUT,
                          absl::StrCat("connect not finished within ",
                                       kConnectTimeoutMs, " ms")));
  }
}

// The peer accepted `link`: what queued on it goes now.
void OpenLink(TcpRdmEp* ep, stream::Link* link) {
  auto handshake = ep->handshakes.find(link);
  // The peer closes its own connection when it takes ours.
  if (handshake->second.rival_fd >= 0) close(handshake->second.rival_fd);
  ep->handshakes.erase(handshake);
  link->connection.Release();
}

// An outgoing connection before its answer: the connect finishing (then
// the hello goes out), or the answer arriving.
void ProgressOutgoing(TcpRdmEp* ep, stream::Link* link,
                      RdmHandshake& handshake) {
  int fd = link->connection.fd();
  if (!handshake.hello_sent) {
    absl::Status status = FinishConnect(fd, 0);
    if (ToFiErrno(status) == -FI_ETIMEDOUT) return;  // not yet
    if (status.ok()) {
      status = SendHandshake(*ep, fd, CmType::kConnRequest,
                             ep->listen_address.sockaddr_ptr(),
                             ep->listen_address.length());
    }
    if (!status.ok()) {
      FailHandshake(ep, link, status);
      return;
    }
    handshake.hello_sent = true;
    Watch(ep, EPOLL_CTL_MOD, fd, EPOLLIN);
    return;
  }
  CmReader::Result result = handshake.answer.Read(fd);
  if (result == CmReader::kPending) return;
  if (result == CmReader::kFailed) {
    FailHandshake(ep, link, handshake.answer.error());
  } else if (handshake.answer.type() != CmType::kAccept) {
    FailHandshake(ep, link,
                  FiError(FI_ECONNREFUSED, "the peer refused the connection"));
  } else {
    OpenLink(ep, link);
  }
}

void AcceptConnections(TcpRdmEp* ep) {
  for (int fd; (fd = AcceptSocket(ep->listen_fd, ep->log())) >= 0;) {
    ep->incoming.push_back(RdmIncoming{fd, CmReader()});
    ep->has_sockets.store(true, std::memory_order_release);
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
    TakeHello(ep, *it);
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
  ep->base.divert = nullptr;
  ep->local_path.reset();  // shm's endpoint is a peer of this one
  if (ep->registered) ep->engine()->Remove(&ep->events);
  stream::UnreserveReceives(&ep->base);
  ep->links.Clear();  // closes their sockets
  stream::ReleaseSharedContexts(&ep->base);
  for (RdmIncoming& in : ep->incoming) close(in.fd);
  for (auto& [link, handshake] : ep->handshakes) {
    if (handshake.rival_fd >= 0) close(handshake.rival_fd);
  }
  close(ep->listen_fd);
  close(ep->epoll_fd);
  ReleaseUtilEndpoint(&ep->base.util);
  delete ep;
  return 0;
}

int Enable(TcpRdmEp* ep) {
  if (int rc = CheckEnable(ep->base.util); rc != 0) return rc;
  if (listen(ep->listen_fd, kBacklog) != 0) {
    return Fail(*ep, FiError(errno, absl::StrCat("listen: ", strerror(errno))));
  }
  absl::StatusOr<IpAddress> name = LocalAddress(ep->listen_fd);
  if (!name.ok()) return Fail(*ep, name.status());
  ep->listen_address = *name;
  ep->base.util.enabled.store(true);
  ep->registered = true;
  ep->base.data_source = &ep->events;
  ep->engine()->Add(&ep->events);
  return 0;
}

int ControlRdmEp(fid* object, int command, void* arg) {
  TcpRdmEp* ep = ToTcpRdmEp(object);
  if (command != FI_ENABLE) {
    int rc = 0;
    {
      MutexLock<OptionalMutex> lock(ep->base.util.mutex);
      rc = ControlUtilEndpoint(&ep->base.util, command, arg);
    }
    // The local path's transmits and receives take the same default flags.
    if (rc == 0 && command == FI_SETOPSFLAG && ep->local_path != nullptr) {
      rc = fi_control(&ep->local_path->shm_endpoint()->fid, command, arg);
    }
    return rc;
  }
  {
    MutexLock<OptionalMutex> lock(ep->base.util.mutex);
    if (ep->base.util.enabled.load()) return 0;
    if (int rc = Enable(ep); rc != 0) return rc;
  }
  // Without the endpoint's lock: shm's progress takes shm's lock, then
  // this endpoint's (the owner's SRX calls).
  if (ep->local_provider != nullptr) {
    ep->local_path =
        TcpLocalPath::Open(*ep->local_provider, &ep->base, ep->listen_address);
    // Transmits to peers on this host go through it (stream/divert.h).
    ep->base.divert = ep->local_path.get();
  }
  return 0;
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
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
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

fi_ops kRdmEpFidOps = MakeFidOps({.close = CloseRdmEp,
                                  .bind = stream::BindStreamEp,
                                  .control = ControlRdmEp});
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

stream::Link* TcpRdmEpEvents::LinkFor(fi_addr_t dest, int* error) {
  TcpRdmEp* ep = ep_;
  auto known = ep->links.to.find(dest);
  if (known != ep->links.to.end()) return known->second;
  absl::StatusOr<IpAddress> peer = AvLookupIp(ep->base.util.av, dest);
  absl::StatusOr<int> fd =
      peer.ok() ? StartConnect(*peer, std::nullopt,
                               ep->base.util.domain->info->domain_attr->tclass)
                : peer.status();
  if (!fd.ok()) {
    *error = Fail(*ep, fd.status());
    return nullptr;
  }
  stream::Link* link = AddLink(ep, *fd, dest, EPOLLOUT);
  link->connection.Hold();
  RdmHandshake handshake;
  handshake.deadline = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(kConnectTimeoutMs);
  ep->handshakes.emplace(link, std::move(handshake));
  ep->links.to[dest] = link;
  return link;
}

void TcpRdmEpEvents::LinkClosed(stream::Link* link, int error) {
  TcpRdmEp* ep = ep_;
  if (error != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "connection to peer %llu lost: %s\n",
            static_cast<unsigned long long>(link->peer), fi_strerror(-error));
  }
  auto handshake = ep->handshakes.find(link);
  if (handshake != ep->handshakes.end()) {
    if (handshake->second.rival_fd >= 0) close(handshake->second.rival_fd);
    ep->handshakes.erase(handshake);
  }
  int fd = link->connection.fd();
  Watch(ep, EPOLL_CTL_DEL, fd, 0);
  ep->link_by_fd.erase(fd);
  ep->links.Retire(link);
}

void TcpRdmEpEvents::LinkBacklog(stream::Link* link, bool backlogged) {
  Watch(ep_, EPOLL_CTL_MOD, link->connection.fd(),
        EPOLLIN | (backlogged ? static_cast<uint32_t>(EPOLLOUT) : 0u));
}

void TcpRdmEpEvents::ReceivePosted() { ep_->links.ProgressStalled(); }

namespace {

// Advances what `fd`, reported ready, belongs to.
void Dispatch(TcpRdmEp* ep, int fd) {
  if (fd == ep->listen_fd) {
    AcceptConnections(ep);
    return;
  }
  auto link = ep->link_by_fd.find(fd);
  if (link == ep->link_by_fd.end()) {
    ProgressHandshake(ep, fd);
    return;
  }
  auto handshake = ep->handshakes.find(link->second);
  if (handshake != ep->handshakes.end()) {
    ProgressOutgoing(ep, link->second, handshake->second);
  } else {
    link->second->connection.Progress();
  }
}

// The pass of few connections (kDirectReadLinks); false, having done
// nothing, for an endpoint that has others or more.
bool ReadLinksDirectly(TcpRdmEp* ep) {
  if (ep->link_by_fd.empty() || ep->link_by_fd.size() > kDirectReadLinks ||
      !ep->handshakes.empty() || !ep->incoming.empty()) {
    return false;
  }
  // A copy: dispatching may change what is watched.
  int fds[kDirectReadLinks];
  size_t count = 0;
  for (const pollfd& watched : ep->watched) {
    if (watched.fd == ep->listen_fd) continue;
    if (count == kDirectReadLinks || ep->link_by_fd.count(watched.fd) == 0) {
      return false;
    }
    fds[count++] = watched.fd;
  }
  for (size_t i = 0; i < count; ++i) Dispatch(ep, fds[i]);
  if (ep->listen_fd >= 0 && ++ep->listen_passes % kListenPollPasses == 0) {
    pollfd listener = {ep->listen_fd, POLLIN, 0};
    if (PollNow(&listener, 1) > 0) AcceptConnections(ep);
  }
  return true;
}

}  // namespace

void TcpRdmEpEvents::Progress() {
  TcpRdmEp* ep = ep_;
  if (!ep->has_sockets.load(std::memory_order_acquire) &&
      !ep->base.any_started.load(std::memory_order_acquire) &&
      ++ep->idle_passes % kIdleListenPollPasses != 0) {
    return;
  }
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  ep->has_sockets.store(!ep->links.all.empty() || !ep->incoming.empty(),
                        std::memory_order_release);
  ep->links.FreeClosed();
  stream::FinishStartedPeerMsgs(&ep->base);
  stream::ResumeAfterCqRoom(&ep->base);
  if (!ep->handshakes.empty()) ExpireHandshakes(ep);
  if (ep->watched.size() > kPollLimit) {
    epoll_event events[kMaxEvents];
    int n = EpollPoll(ep->epoll_fd, events, kMaxEvents);
    for (int i = 0; i < n; ++i) Dispatch(ep, events[i].data.fd);
    return;
  }
  if (!ReadLinksDirectly(ep)) {
    // A copy: dispatching may change what is watched.
    pollfd fds[kPollLimit];
    size_t count = ep->watched.size();
    std::copy(ep->watched.begin(), ep->watched.end(), fds);
    int ready = PollNow(fds, count);
    for (size_t i = 0; ready > 0 && i < count; ++i) {
      if (fds[i].revents == 0) continue;
      --ready;
      Dispatch(ep, fds[i].fd);
    }
  }
  if (ep->epoll_armed && ++ep->busy_passes >= kBusyPasses &&
      ep->watched.size() <= kPollLimit && !ep->engine()->armed()) {
    ArmEpoll(ep, false);
  }
}

int TcpRdmEpEvents::progress_fd() const { return ep_->epoll_fd; }

void TcpRdmEpEvents::ArmFds() {
  MutexLock<OptionalMutex> lock(ep_->base.util.mutex);
  ep_->busy_passes = 0;
  ArmEpoll(ep_, true);
}

bool TcpRdmEpEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

int OpenTcpRdmEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                 void* context, const Provider* local_provider) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
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
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  Watch(ep.get(), EPOLL_CTL_ADD, ep->listen_fd, EPOLLIN);
  stream::InstallDataPathOps(&ep->base, *info, &kRdmCmOps);
  ep->local_provider = local_provider;
  *ep_out = &ep.release()->base.util.ep_fid;
  return 0;
}

}  // namespace tcp
}  // namespace fabric

#include "fabric/providers/shm/shm_rdm_ep.h"

#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_connection.h"
#include "fabric/providers/shm/shm_names.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace shm {
namespace {

using stream::Connection;
using stream::Link;

ShmRdmEp* ToShmRdmEp(fid* object) { return FidCast<ShmRdmEp>(object); }

absl::StatusOr<IpAddress> LoopbackAddress(int family) {
  sockaddr_storage storage = {};
  socklen_t len;
  if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    len = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(sockaddr_in);
  }
  return IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&storage), len);
}

int Fail(const ShmRdmEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

// A transmit's connection could not be made. That no endpoint is there is
// an answer the owner of a local path expects (it goes another way): info.
int FailConnect(const ShmRdmEp& ep, const absl::Status& status) {
  if (ep.scope.empty() || ToFiErrno(status) != -FI_ECONNREFUSED) {
    return Fail(ep, status);
  }
  FI_INFO(ep.log(), FI_LOG_EP_CTRL, "%s\n",
          std::string(status.message()).c_str());
  return ToFiErrno(status);
}

Link* AddLink(ShmRdmEp* ep, std::unique_ptr<RingStream> stream, fi_addr_t peer,
              ShmLinkState state) {
  state.stream = stream.get();
  Link* link = ep->links.Add(std::make_unique<ShmLink>(
      &ep->base, std::move(stream), peer, std::move(state)));
  return link;
}

// Says how a new link's large incoming messages travel: copied from the
// peer's memory (info), or, logged once per process, through the rings.
void NoteProbe(const ShmRdmEp& ep, const RingStream& stream) {
  static std::once_flag logged;
  if (!ep.cross_memory) return;
  if (stream.CanPull()) {
    FI_INFO(ep.log(), FI_LOG_EP_CTRL,
            "large messages of a new peer are copied from its memory "
            "(cross-memory attach)\n");
    return;
  }
  std::call_once(logged, [&ep] {
    FI_WARN(ep.log(), FI_LOG_EP_CTRL,
            "cross-memory attach to a peer is not possible (another pid "
            "namespace, or process_vm_readv refused): its large messages go "
            "through the rings\n");
  });
}

// The connections peers posted to the endpoint's segment become links.
void AcceptRequests(ShmRdmEp* ep) {
  size_t malformed = 0;
  std::vector<std::string> names = ep->requests->Take(&malformed);
  if (malformed > 0) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL,
            "dropped %zu malformed connection requests\n", malformed);
  }
  for (const std::string& name : names) {
    absl::StatusOr<AcceptedConnection> accepted = TakeConnection(
        name, ep->base.util.auth_key, &*ep->doorbell, ep->cross_memory,
        ep->scope);
    if (!accepted.ok()) {
      Fail(*ep, accepted.status());
      continue;
    }
    fi_addr_t peer = AvFindIp(ep->base.util.av, accepted->connector);
    ShmLinkState state;
    state.peer_segment = EndpointSegmentName(accepted->connector, ep->scope);
    NoteProbe(*ep, *accepted->stream);
    Link* link = AddLink(ep, std::move(accepted->stream), peer, state);
    // What FI_SOURCE_ERR reports, and what a later AV insert is matched by.
    link->peer_name =
        AddressBytes(accepted->connector, ep->base.util.info->addr_format);
    // Transmits to the connector take this connection's other ring, unless
    // they already have a connection of their own (both sides connected at
    // once): each side keeps sending on one, so order holds.
    if (peer != FI_ADDR_NOTAVAIL && ep->links.to.count(peer) == 0) {
      ep->links.to[peer] = link;
    }
  }
}

// An outgoing link before the peer's answer.
void ProgressOutgoing(ShmRdmEp* ep, Link* link, ShmLinkState& state) {
  uint32_t answer =
      state.stream->area()->state.load(std::memory_order_acquire);
  if (answer == kAccepted) {
    state.stream->ProbePeer(ep->cross_memory);
    NoteProbe(*ep, *state.stream);
    state.awaiting_accept = false;
    link->connection.Release();
    return;
  }
  if (answer == kRefused) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "peer %llu refused the connection\n",
            static_cast<unsigned long long>(link->peer));
    link->connection.Close(-FI_ECONNREFUSED);
  } else if (std::chrono::steady_clock::now() >= state.deadline) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL,
            "peer %llu did not take the connection within %d ms\n",
            static_cast<unsigned long long>(link->peer), kConnectTimeoutMs);
    link->connection.Close(-FI_ETIMEDOUT);
  }
}

// Fails the links whose peer process is gone.
void CheckLiveness(ShmRdmEp* ep) {
  if (++ep->passes < kPassesPerClockRead) return;
  ep->passes = 0;
  auto now = std::chrono::steady_clock::now();
  if (now < ep->next_liveness_check) return;
  ep->next_liveness_check = now + std::chrono::milliseconds(kLivenessCheckMs);
  for (size_t i = 0; i < ep->links.all.size(); ++i) {
    Link* link = ep->links.all[i].get();
    const ShmLinkState& state = AsShmLink(link)->shm;
    if (!IsSegmentInUse(state.peer_segment)) {
      FI_WARN(ep->log(), FI_LOG_EP_DATA, "peer endpoint %s is gone\n",
              state.peer_segment.c_str());
      link->connection.Close(-FI_ECONNRESET);
      --i;  // Close took the link out of `all`
    }
  }
}

int CloseRdmEp(fid* object) {
  ShmRdmEp* ep = ToShmRdmEp(object);
  UtilCq* rx_cq = ep->base.util.rx_cq;
  if (ep->registered && rx_cq != nullptr) CqClearDirect(rx_cq, &ep->events);
  if (ep->registered) ep->engine()->Remove(&ep->events);
  stream::UnreserveReceives(&ep->base);
  ep->links.Clear();  // shuts their streams down
  stream::ReleaseSharedContexts(&ep->base);
  ReleaseUtilEndpoint(&ep->base.util);
  delete ep;
  return 0;
}

int Enable(ShmRdmEp* ep) {
  if (ep->base.util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->base.util); rc != 0) return rc;
  ep->base.util.enabled.store(true);
  ep->registered = true;
  ep->engine()->Add(&ep->events);
  // Not under automatic progress: there the engine's thread reads the
  // links too, and counts the application's passes.
  UtilCq* rx_cq = ep->base.util.rx_cq;
  if (rx_cq != nullptr && !ep->events.auto_progress()) {
    CqSetDirect(rx_cq, &ep->events, 1 + (rx_cq == ep->base.util.tx_cq));
  }
  return 0;
}

int ControlRdmEp(fid* object, int command, void* arg) {
  ShmRdmEp* ep = ToShmRdmEp(object);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  return ControlUtilEndpoint(&ep->base.util, command, arg);
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  ShmRdmEp* ep = ToShmRdmEp(object);
  if (addrlen == nullptr) {
    return Fail(*ep, FiError(FI_EINVAL, "fi_getname: addrlen is NULL"));
  }
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  return CopyAddressOut(ep->address, ep->base.util.info->addr_format, addr,
                        addrlen);
}

// Takes `address` (port 0: a free number the provider picks) as the
// endpoint's name: its segment and doorbell.
absl::Status TakeAddress(ShmRdmEp* ep, IpAddress address) {
  bool pick = address.port() == 0;
  if (address.IsWildcard()) {
    absl::StatusOr<IpAddress> loopback = LoopbackAddress(address.family());
    if (!loopback.ok()) return loopback.status();
    loopback->set_port(address.port());
    address = *loopback;
  }
  std::random_device seed;
  std::mt19937 random(seed());
  std::uniform_int_distribution<int> ports(1024, 65535);
  absl::StatusOr<RequestTable> requests =
      FiError(FI_EADDRINUSE, "no free shm address");
  for (int attempt = 0; attempt < (pick ? 64 : 1); ++attempt) {
    if (pick) address.set_port(static_cast<uint16_t>(ports(random)));
    requests = RequestTable::Create(address, ep->scope);
    if (requests.ok() || ToFiErrno(requests.status()) != -FI_EADDRINUSE) break;
  }
  if (!requests.ok()) return requests.status();
  absl::StatusOr<Doorbell> doorbell =
      Doorbell::Bind(DoorbellName(address, ep->scope));
  if (!doorbell.ok()) return doorbell.status();
  ep->requests = *std::move(requests);
  ep->doorbell = *std::move(doorbell);
  ep->address = address;
  return absl::OkStatus();
}

int SetName(fid* object, void* addr, size_t addrlen) {
  ShmRdmEp* ep = ToShmRdmEp(object);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (ep->base.util.enabled.load()) {
    return Fail(*ep, FiError(FI_EOPBADSTATE,
                             "fi_setname: the endpoint is already enabled"));
  }
  absl::StatusOr<IpAddress> address =
      IpFromUser(ep->base.util.info->addr_format, addr, addrlen);
  if (!address.ok()) return Fail(*ep, address.status());
  if (address->SameHost(ep->address) &&
      address->port() == ep->address.port()) {
    return 0;
  }
  // The old name goes first: the new one may be the same address.
  std::optional<RequestTable> old_requests = std::move(ep->requests);
  std::optional<Doorbell> old_doorbell = std::move(ep->doorbell);
  ep->requests.reset();
  ep->doorbell.reset();
  absl::Status status = TakeAddress(ep, *address);
  if (!status.ok()) {
    ep->requests = std::move(old_requests);
    ep->doorbell = std::move(old_doorbell);
    return Fail(*ep, status);
  }
  return 0;
}

fi_ops kRdmEpFidOps = MakeFidOps({.close = CloseRdmEp,
                                  .bind = stream::BindStreamEp,
                                  .control = ControlRdmEp});
fi_ops_cm kRdmCmOps = ConnectionlessCmOps(SetName, GetName);

// The address the endpoint starts with: info->src_addr, else 127.0.0.1.
absl::StatusOr<IpAddress> InitialAddress(const fi_info& info) {
  if (info.src_addr != nullptr) {
    return IpFromUser(info.addr_format, info.src_addr, info.src_addrlen);
  }
  return LoopbackAddress(info.addr_format == FI_SOCKADDR_IN6 ? AF_INET6
                                                                 : AF_INET);
}

}  // namespace

Link* ShmRdmEpEvents::LinkFor(fi_addr_t dest, int* error) {
  ShmRdmEp* ep = ep_;
  auto known = ep->links.to.find(dest);
  if (known != ep->links.to.end()) return known->second;
  absl::StatusOr<IpAddress> peer = AvLookupIp(ep->base.util.av, dest);
  if (!peer.ok()) {
    *error = Fail(*ep, peer.status());
    return nullptr;
  }
  absl::StatusOr<Segment> peer_segment =
      Segment::Open(EndpointSegmentName(*peer, ep->scope));
  if (!peer_segment.ok()) {
    // No such endpoint is a refusal; anything else (no fd left: EMFILE)
    // says what it is.
    bool absent = ToFiErrno(peer_segment.status()) == -FI_ENOENT;
    *error = FailConnect(
        *ep, absent ? FiError(FI_ECONNREFUSED,
                              absl::StrCat("no shm endpoint at ",
                                           FormatAddrStr(*peer)))
                    : peer_segment.status());
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<RingStream>> stream =
      MakeConnection(ep->address, ep->base.util.auth_key, ep->ring_capacity,
                     &*ep->doorbell, *peer, ep->scope);
  bool wake = false;
  absl::Status posted =
      stream.ok() ? PostRequest(*peer_segment, (*stream)->segment().name(),
                                &wake)
                  : stream.status();
  if (!posted.ok()) {
    *error = FailConnect(*ep, posted);
    return nullptr;
  }
  if (wake) ep->doorbell->Ring(DoorbellName(*peer, ep->scope));
  ShmLinkState state;
  state.peer_segment = peer_segment->name();
  state.awaiting_accept = true;
  state.deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(kConnectTimeoutMs);
  Link* link = AddLink(ep, *std::move(stream), dest, state);
  link->connection.Hold();
  ep->links.to[dest] = link;
  return link;
}

void ShmRdmEpEvents::LinkClosed(Link* link, int error) {
  ShmRdmEp* ep = ep_;
  if (error != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "connection to peer %llu lost: %s\n",
            static_cast<unsigned long long>(link->peer), fi_strerror(-error));
  }
  ep->links.Retire(link);
}

void ShmRdmEpEvents::LinkBacklog(Link* link, bool backlogged) {
  AsShmLink(link)->shm.backlogged = backlogged;
}

void ShmRdmEpEvents::ReceivePosted() { ep_->links.ProgressStalled(); }

void ShmRdmEpEvents::Progress() {
  ShmRdmEp* ep = ep_;
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  ep->links.FreeClosed();
  stream::FinishStartedPeerMsgs(&ep->base);
  stream::ResumeAfterCqRoom(&ep->base);
  if (ep->armed) {
    // Awake again: peers need not ring any more.
    ep->armed = false;
    ep->requests->Awake();
    ep->doorbell->Drain();
  }
  if (ep->requests->HasRequests()) AcceptRequests(ep);
  for (size_t i = 0; i < ep->links.all.size(); ++i) {
    Link* link = ep->links.all[i].get();
    ShmLinkState& state = AsShmLink(link)->shm;
    if (state.awaiting_accept) {
      ProgressOutgoing(ep, link, state);
    } else if (state.stream->HasInput() ||
               link->connection.HasWorkWithoutInput()) {
      // (Most passes of a polling loop find neither.)
      link->connection.Progress();
    }
    // A link that closed left `all`: the next one moved to index i.
    if (i < ep->links.all.size() && ep->links.all[i].get() != link) --i;
  }
  if (!ep->links.all.empty()) CheckLiveness(ep);
}

size_t ShmRdmEpEvents::ReadDirect(UtilCq* cq, void* buf, size_t count,
                                  fi_addr_t* sources) {
  ShmRdmEp* ep = ep_;
  CqReadBuffer direct = {cq, buf, sources, count};
  bool pass = false;
  {
    MutexLock<OptionalMutex> lock(ep->base.util.mutex);
    // Entries a pass queued meanwhile are older: they go first.
    if (cq->size.load(std::memory_order_acquire) != 0) return 0;
    pass = !ep->links.closed.empty() ||
           ep->base.any_started.load(std::memory_order_relaxed) ||
           ep->base.awaiting_cq_room || ep->armed ||
           ep->requests->HasRequests();
    // From where the last read stopped: a read that fills its buffer from
    // one link leaves the others to the next ones, never for good.
    const size_t links = ep->links.all.size();
    if (ep->direct_start >= links) ep->direct_start = 0;  // links closed
    size_t visited = 0;
    for (; visited < links && direct.written < count; ++visited) {
      size_t i = ep->direct_start + visited;
      if (i >= links) i -= links;
      Link* link = ep->links.all[i].get();
      if (AsShmLink(link)->shm.awaiting_accept) {
        pass = true;
        continue;
      }
      Connection::Whole whole;
      do {
        whole = link->connection.TakeWholeNow(&direct);
      } while (whole == Connection::Whole::kTaken && direct.written < count);
      if (whole != Connection::Whole::kOther) continue;
      pass = true;
      // A link closed (its failures queued: later entries go after them).
      if (ep->links.all.size() != links ||
          cq->size.load(std::memory_order_acquire) != 0) {
        break;
      }
    }
    ep->direct_start += visited;
    if (ep->direct_start >= links) ep->direct_start -= links;
    if (!pass && links > 0) CheckLiveness(ep);
  }
  // What only a pass does; what it completes queues after these entries.
  if (pass) Progress();
  return direct.written;
}

bool ShmRdmEpEvents::PrepareToSleep() {
  ShmRdmEp* ep = ep_;
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  ep->armed = true;
  bool sleep = ep->requests->PrepareToSleep();
  for (const auto& link : ep->links.all) {
    const ShmLinkState& state = AsShmLink(link.get())->shm;
    if (state.awaiting_accept) {
      // The acceptor rings when it answers; until then, poll the answer.
      if (state.stream->area()->state.load(std::memory_order_acquire) !=
          kOffered) {
        sleep = false;
      }
      continue;
    }
    if (!state.stream->PrepareToSleep(state.backlogged) ||
        link->connection.AwaitingCopy()) {
      sleep = false;
    }
  }
  return sleep;
}

int ShmRdmEpEvents::progress_fd() const { return ep_->doorbell->fd(); }

bool ShmRdmEpEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

int OpenShmRdmEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                 void* context, const ShmEpOptions& options) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  auto ep = std::make_unique<ShmRdmEp>();
  ep->base.util.ep_fid = {};
  ep->ring_capacity = options.ring_capacity;
  ep->cross_memory = options.cross_memory;
  if (domain->peer_owner != nullptr) {
    ep->scope = domain->peer_owner->fabric->provider->name();
  }
  absl::StatusOr<IpAddress> address = InitialAddress(*info);
  absl::Status status =
      address.ok() ? TakeAddress(ep.get(), *address) : address.status();
  if (status.ok()) {
    status = InitUtilEndpoint(&ep->base.util, domain, info, context,
                              &kRdmEpFidOps);
  }
  if (!status.ok()) {
    return LogFailure(log, FI_LOG_EP_CTRL, status, "fi_endpoint");
  }
  stream::InstallDataPathOps(&ep->base, *info, &kRdmCmOps);
  *ep_out = &ep.release()->base.util.ep_fid;
  return 0;
}

}  // namespace shm
}  // namespace fabric

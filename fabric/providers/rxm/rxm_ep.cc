#include "fabric/providers/rxm/rxm_ep.h"

#include <errno.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace rxm {
namespace {

using stream::Link;

// An FI_CONNREQ's entry and the requester's name after it.
constexpr size_t kMaxEvent = sizeof(fi_eq_cm_entry) + 256;

RxmEp* ToRxmEp(fid* object) { return FidCast<RxmEp>(object); }

int Fail(const RxmEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

absl::Status CallFailed(const char* call, int rc) {
  return FiError(-rc, absl::StrCat(call, ": ", fi_strerror(-rc)));
}

// Whether MSG endpoints opened with `info` read each other's memory: FI_RMA
// with FI_READ and FI_REMOTE_READ (or no direction named: all of them).
bool OffersRmaReads(const fi_info& info) {
  constexpr uint64_t kDirections =
      FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  const uint64_t caps = info.caps;
  if ((caps & FI_RMA) == 0) return false;
  return (caps & kDirections) == 0 ||
         ((caps & FI_READ) != 0 && (caps & FI_REMOTE_READ) != 0);
}

// An internal MSG endpoint on `info`, bound to the endpoint's EQ and CQ
// and enabled, inside a stream. *opened says whether fi_endpoint succeeded
// (it took a connection request's handle).
absl::StatusOr<std::unique_ptr<MsgStream>> OpenStream(RxmEp* ep, fi_info* info,
                                                      bool* opened) {
  fid_domain* domain = ep->msg_domain;
  fid_ep* msg_ep = nullptr;
  int rc = fi_endpoint(domain, info, &msg_ep, nullptr);
  *opened = rc == 0;
  if (rc != 0) return CallFailed("fi_endpoint (MSG)", rc);
  rc = fi_ep_bind(msg_ep, &ep->eq->fid, 0);
  if (rc == 0) rc = fi_ep_bind(msg_ep, &ep->cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc == 0) rc = fi_enable(msg_ep);
  if (rc != 0) {
    fi_close(&msg_ep->fid);
    return CallFailed("binding an MSG endpoint", rc);
  }
  RmaReads reads;
  reads.cq = ep->cq;
  reads.virt_addr = ep->virt_addr;
  return MsgStream::Open(domain, msg_ep, ep->register_buffers, &ep->retired,
                         ep->rma_reads ? &reads : nullptr,
                         ep->msg_info->tx_attr->inject_size);
}

RxmLink* AddLink(RxmEp* ep, std::unique_ptr<MsgStream> stream,
                 fi_addr_t peer) {
  MsgStream* raw = stream.get();
  auto link = std::make_unique<RxmLink>(&ep->base, std::move(stream), peer);
  link->stream = raw;
  // Transmits queue unwritten until the connection is up.
  link->connection.Hold();
  ep->connecting.fetch_add(1);
  RxmLink* added = static_cast<RxmLink*>(ep->links.Add(std::move(link)));
  ep->by_ep[raw->ep()] = added;
  return added;
}

constexpr size_t kDrainBatch = 32;

void DispatchAll(const fi_cq_msg_entry* entries, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    MsgStream::DispatchCompletion(entries[i].op_context, entries[i].len);
  }
}

// Hands what the internal CQ holds to the streams; returns whether it held
// anything.
bool DrainQueued(RxmEp* ep) {
  if (!CqHoldsEntries(ep->cq)) return false;  // the common case: cheap
  bool any = false;
  fi_cq_msg_entry entries[kDrainBatch];
  for (;;) {
    ssize_t n = CqReadWithoutProgress(ep->cq, entries, kDrainBatch);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error = {};
      if (fi_cq_readerr(ep->cq, &error, 0) != 1) break;
      MsgStream::DispatchError(error.op_context, error.err);
      any = true;
      continue;
    }
    if (n <= 0) break;
    any = true;
    DispatchAll(entries, static_cast<size_t>(n));
  }
  return any;
}

// Hands the streams the completions their endpoints' providers write
// straight into a buffer (util/cq.h CqReadDirectFrom: no queue, lock or
// engine pass); returns whether there were any.
bool DrainDirect(RxmEp* ep, bool* all_direct) {
  bool any = false;
  fi_cq_msg_entry entries[kDrainBatch];
  for (const auto& link : ep->links.all) {
    CqDirectProducer* producer =
        static_cast<const RxmLink*>(link.get())->stream->direct_producer();
    if (producer == nullptr) {
      *all_direct = false;
      continue;
    }
    // One read per pass: what is left waits for the next.
    const size_t n = CqReadDirectFrom(ep->cq, producer, entries, kDrainBatch);
    DispatchAll(entries, n);
    any = any || n > 0;
  }
  return any;
}

// Hands every completion of the internal endpoints to its stream; whether
// there were any, and in *all_direct whether every link's endpoint gives
// its completions straight. The queue goes first and last: a direct read
// stops at a queued entry (an error), and what follows it on that
// endpoint is queued after it.
bool DrainCq(RxmEp* ep, bool* all_direct = nullptr) {
  bool ignored = true;
  bool any = DrainQueued(ep);
  if (DrainDirect(ep, all_direct != nullptr ? all_direct : &ignored)) {
    DrainQueued(ep);
    any = true;
  }
  // Closed streams' buffers can have no entries left.
  ep->retired.clear();
  return any;
}

// Accepts a peer's connection request; `data` is its name.
void Accept(RxmEp* ep, fi_info* info, const char* data, size_t len) {
  absl::StatusOr<IpAddress> peer =
      IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(data),
                              static_cast<socklen_t>(len));
  bool opened = false;
  absl::StatusOr<std::unique_ptr<MsgStream>> stream =
      peer.ok() ? OpenStream(ep, info, &opened) : peer.status();
  if (!stream.ok()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "refusing a connection: %s\n",
            std::string(stream.status().message()).c_str());
    // An endpoint that took the request refused it as it closed.
    if (!opened) fi_reject(ep->pep, info->handle, nullptr, 0);
    return;
  }
  fid_ep* msg_ep = (*stream)->ep();
  int rc = fi_accept(msg_ep, nullptr, 0);
  if (rc != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "fi_accept: %s\n", fi_strerror(-rc));
    return;  // the stream closes its endpoint
  }
  fi_addr_t source = AvFindIp(ep->base.util.av, *peer);
  RxmLink* link = AddLink(ep, *std::move(stream), source);
  link->peer_name = AddressBytes(*peer, ep->base.util.info->addr_format);
  if (source != FI_ADDR_NOTAVAIL && ep->links.to.count(source) == 0) {
    ep->links.to[source] = link;
  }
}

// The link an EQ entry is about, or null.
RxmLink* LinkOf(RxmEp* ep, fid* endpoint) {
  auto found = ep->by_ep.find(reinterpret_cast<fid_ep*>(endpoint));
  return found != ep->by_ep.end() ? found->second : nullptr;
}

// The link's connection is set up, or given up.
void StopConnecting(RxmLink* link) {
  if (!link->connecting) return;
  link->connecting = false;
  FidCast<RxmEp>(link->ep)->connecting.fetch_sub(1);
}

void Connected(RxmLink* link) {
  if (!link->connecting) return;
  StopConnecting(link);
  link->stream->OnConnected();
  link->connection.Release();
}

// A connection that ended or never came up (`err`: its error, or 0).
void Ended(RxmLink* link, int err) {
  if (!link->connecting) {
    // Connected: data may still be on its way into the receive buffers;
    // the stream ends after it (the provider flushes the receives).
    if (err == 0) {
      link->stream->OnPeerShutdown();
    } else {
      link->stream->OnEnded(err);
    }
    return;
  }
  link->stream->OnEnded(err);
  StopConnecting(link);
  // Its transmits never went: they fail with the connect's error.
  link->connection.Close(-(err != 0 ? err : FI_ECONNREFUSED));
}

// One internal EQ entry, taken out of the EQ.
struct CmEvent {
  uint32_t event = 0;  // 0 for an error entry
  fid* endpoint = nullptr;
  fi_info* info = nullptr;  // FI_CONNREQ's (owned until handled)
  std::vector<char> data;   // its connection data
  int err = 0;              // an error entry's
  RxmLink* link = nullptr;  // whom it is about, found before any is handled
};

// Takes every event of the internal EQ. The links they are about are all
// found before any is handled: accepting a request opens an endpoint,
// which may take the address of one closed earlier, whose late events
// would otherwise find the new link.
void DrainEq(RxmEp* ep) {
  std::vector<CmEvent> events;
  alignas(fi_eq_cm_entry) char buf[kMaxEvent];
  for (;;) {
    CmEvent taken;
    ssize_t n = EqReadWithoutProgress(ep->eq, &taken.event, buf, sizeof(buf));
    if (n == -FI_EAVAIL) {
      fi_eq_err_entry error = {};
      if (fi_eq_readerr(ep->eq, &error, 0) < 0) break;
      taken.event = 0;
      taken.endpoint = error.fid;
      taken.err = error.err;
    } else if (n >= static_cast<ssize_t>(sizeof(fi_eq_cm_entry))) {
      fi_eq_cm_entry entry;
      memcpy(&entry, buf, sizeof(entry));
      taken.endpoint = entry.fid;
      taken.info = entry.info;
      taken.data.assign(buf + sizeof(entry), buf + n);
    } else {
      break;
    }
    if (taken.event != FI_CONNREQ) taken.link = LinkOf(ep, taken.endpoint);
    events.push_back(std::move(taken));
  }
  for (CmEvent& event : events) {
    if (event.event == FI_CONNREQ) {
      Accept(ep, event.info, event.data.data(), event.data.size());
      fi_freeinfo(event.info);
      continue;
    }
    RxmLink* link = event.link;
    // A link retired by an earlier event of this batch is no longer here.
    if (link == nullptr || LinkOf(ep, event.endpoint) != link) continue;
    if (event.event == 0) {
      FI_WARN(ep->log(), FI_LOG_EP_CTRL, "connection to peer %llu: %s\n",
              static_cast<unsigned long long>(link->peer),
              fi_strerror(event.err));
      Ended(link, event.err);
    } else if (event.event == FI_CONNECTED) {
      Connected(link);
    } else if (event.event == FI_SHUTDOWN) {
      Ended(link, 0);
    }
  }
}

// The connections' sends still in flight, given up to kCloseDrainMs to
// complete (the endpoint closes).
void DrainSends(RxmEp* ep) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(kCloseDrainMs);
  for (;;) {
    bool done = true;
    for (const auto& link : ep->links.all) {
      MsgStream* stream = static_cast<RxmLink*>(link.get())->stream;
      stream->ConfirmInjects();
      if (!stream->sends_done()) done = false;
    }
    if (done || std::chrono::steady_clock::now() >= deadline) return;
    ep->msg_engine()->Run();
    DrainCq(ep);
  }
}

int CloseRxmEp(fid* object) {
  RxmEp* ep = ToRxmEp(object);
  if (ep->registered) {
    ep->engine()->Remove(&ep->events);
    ep->engine()->Remove(&ep->cm_events);
  }
  stream::UnreserveReceives(&ep->base);
  if (ep->cq != nullptr) DrainSends(ep);
  ep->by_ep.clear();
  ep->links.Clear();  // closes the MSG endpoints
  ep->links.FreeClosed();
  if (ep->cq != nullptr) DrainCq(ep);
  ep->retired.clear();
  if (ep->pep != nullptr) fi_close(&ep->pep->fid);
  if (ep->cq != nullptr) fi_close(&ep->cq->fid);
  if (ep->eq != nullptr) fi_close(&ep->eq->fid);
  if (ep->msg_domain != nullptr) fi_close(&ep->msg_domain->fid);
  stream::ReleaseSharedContexts(&ep->base);
  ReleaseUtilEndpoint(&ep->base.util);
  delete ep;
  return 0;
}

int Enable(RxmEp* ep) {
  if (ep->base.util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->base.util); rc != 0) return rc;
  ep->base.util.enabled.store(true);
  ep->registered = true;
  ep->engine()->Add(&ep->events);
  ep->engine()->Add(&ep->cm_events);
  return 0;
}

int ControlRxmEp(fid* object, int command, void* arg) {
  RxmEp* ep = ToRxmEp(object);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  return ControlUtilEndpoint(&ep->base.util, command, arg);
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  RxmEp* ep = ToRxmEp(object);
  if (addrlen == nullptr) {
    return Fail(*ep, FiError(FI_EINVAL, "fi_getname: addrlen is NULL"));
  }
  return CopyAddressOut(ep->address, ep->base.util.info->addr_format, addr,
                        addrlen);
}

// The name is the passive endpoint's, chosen at fi_endpoint.
int SetName(fid* object, void*, size_t) {
  return Fail(*ToRxmEp(object),
              FiError(FI_EOPNOTSUPP, "fi_setname: an RDM endpoint over MSG "
                                     "endpoints takes its name from "
                                     "info->src_addr"));
}

fi_ops kRxmEpFidOps = MakeFidOps({.close = CloseRxmEp,
                                  .bind = stream::BindStreamEp,
                                  .control = ControlRxmEp});
fi_ops_cm kRxmCmOps = ConnectionlessCmOps(SetName, GetName);

// The internal domain, EQ, CQ and listening passive endpoint, and the
// name.
absl::Status OpenInternals(RxmEp* ep) {
  UtilDomain* domain = ep->base.util.domain;
  int rc = fi_domain(&domain->fabric->fabric_fid, ep->msg_info.get(),
                     &ep->msg_domain, nullptr);
  if (rc != 0) return CallFailed("fi_domain (internal)", rc);
  fi_eq_attr eq_attr = {};
  eq_attr.size = 1024;
  eq_attr.wait_obj = FI_WAIT_NONE;
  rc = fi_eq_open(&domain->fabric->fabric_fid, &eq_attr, &ep->eq, nullptr);
  if (rc != 0) return CallFailed("fi_eq_open (internal)", rc);
  fi_cq_attr cq_attr = {};
  cq_attr.size = kCqSize;
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.wait_obj = FI_WAIT_NONE;
  rc = fi_cq_open(ep->msg_domain, &cq_attr, &ep->cq, nullptr);
  if (rc != 0) return CallFailed("fi_cq_open (internal)", rc);
  fid_fabric* fabric = &domain->fabric->fabric_fid;
  rc = fi_passive_ep(fabric, ep->msg_info.get(), &ep->pep, nullptr);
  if (rc == 0) rc = fi_pep_bind(ep->pep, &ep->eq->fid, 0);
  if (rc == 0) rc = fi_listen(ep->pep);
  if (rc != 0) return CallFailed("listening (internal passive endpoint)", rc);
  sockaddr_storage name = {};
  size_t len = sizeof(name);
  rc = fi_getname(&ep->pep->fid, &name, &len);
  if (rc != 0) return CallFailed("fi_getname (internal passive endpoint)", rc);
  absl::StatusOr<IpAddress> address = IpAddress::FromSockaddr(
      reinterpret_cast<sockaddr*>(&name), static_cast<socklen_t>(len));
  if (!address.ok()) return address.status();
  ep->address = *address;
  ep->name.assign(reinterpret_cast<char*>(&name),
                  reinterpret_cast<char*>(&name) + len);
  // Connecting endpoints bind the same address on another port.
  IpAddress source = *address;
  source.set_port(0);
  ep->connect_info = DupInfo(*ep->msg_info);
  if (ep->connect_info == nullptr ||
      !SetAddress(&ep->connect_info->src_addr,
                  &ep->connect_info->src_addrlen, source.sockaddr_ptr(),
                  source.length())) {
    return FiError(FI_ENOMEM, "out of memory");
  }
  return absl::OkStatus();
}

}  // namespace

Link* RxmEpEvents::LinkFor(fi_addr_t dest, int* error) {
  RxmEp* ep = ep_;
  auto known = ep->links.to.find(dest);
  if (known != ep->links.to.end()) return known->second;
  absl::StatusOr<IpAddress> peer = AvLookupIp(ep->base.util.av, dest);
  if (!peer.ok()) {
    *error = Fail(*ep, peer.status());
    return nullptr;
  }
  bool opened = false;
  absl::StatusOr<std::unique_ptr<MsgStream>> stream =
      OpenStream(ep, ep->connect_info.get(), &opened);
  if (!stream.ok()) {
    *error = Fail(*ep, stream.status());
    return nullptr;
  }
  int rc = fi_connect((*stream)->ep(), peer->sockaddr_ptr(), ep->name.data(),
                      ep->name.size());
  if (rc != 0) {
    *error = Fail(*ep, CallFailed("fi_connect", rc));
    return nullptr;
  }
  RxmLink* link = AddLink(ep, *std::move(stream), dest);
  ep->links.to[dest] = link;
  return link;
}

void RxmEpEvents::LinkClosed(Link* link, int error) {
  RxmEp* ep = ep_;
  if (error != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "connection to peer %llu lost: %s\n",
            static_cast<unsigned long long>(link->peer), fi_strerror(-error));
  }
  auto* rxm = static_cast<RxmLink*>(link);
  StopConnecting(rxm);
  ep->by_ep.erase(rxm->stream->ep());
  ep->links.Retire(link);
}

void RxmEpEvents::LinkBacklog(Link*, bool) {}

void RxmEpEvents::ReceivePosted() { ep_->links.ProgressStalled(); }

void RxmEpEvents::Progress() {
  RxmEp* ep = ep_;
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  ep->links.FreeClosed();
  // The internal endpoints' completions, straight from their providers
  // where they can. The internal domain's engine (which takes them into the
  // internal CQ where they cannot go straight) runs when that found none
  // and a link's endpoint gives none straight or links connect, and at
  // least every kEnginePassInterval passes. (A provider that gives them
  // straight reads its connection's events while its reads find nothing.)
  bool all_direct = true;
  const bool drained = DrainCq(ep, &all_direct);
  const bool engine_needed =
      !drained && (!all_direct || ep->connecting.load() > 0);
  if (engine_needed ||
      ++ep->passes_without_engine >= kEnginePassInterval) {
    ep->passes_without_engine = 0;
    lock.Unlock();
    ep->msg_engine()->Run();
    lock.Lock();
    DrainQueued(ep);
  }
  stream::FinishStartedPeerMsgs(&ep->base);
  stream::ResumeAfterCqRoom(&ep->base);
  for (size_t i = 0; i < ep->links.all.size(); ++i) {
    auto* link = static_cast<RxmLink*>(ep->links.all[i].get());
    if (!link->connecting) link->connection.Progress();
    // A link that closed left `all`: the next one moved to index i.
    if (i < ep->links.all.size() && ep->links.all[i].get() != link) --i;
  }
}

bool RxmEpEvents::PrepareToSleep() {
  RxmEp* ep = ep_;
  if (!ep->msg_engine()->PrepareToSleep()) return false;
  // Arming may have reported completions (verbs polls its CQ after
  // arming it), and the links' calls complete some without any fd.
  if (CqTryWait(&ep->cq->fid) != 0) return false;
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  for (const auto& link : ep->links.all) {
    const auto* rxm = static_cast<const RxmLink*>(link.get());
    // Bytes the link would read now (not a link waiting for a receive,
    // nor one not connected yet, nor one waiting for its reads: those wait
    // for the application, the peer or the CQ).
    if (!rxm->connecting && !rxm->connection.stalled() &&
        !rxm->connection.AwaitingCopy() && rxm->stream->readable()) {
      return false;
    }
  }
  return true;
}

int RxmEpEvents::progress_fd() const { return ep_->msg_engine()->fd(); }

bool RxmEpEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

void RxmCmEvents::Progress() {
  RxmEp* ep = ep_;
  if (ep->connecting.load() == 0 && !ep->cm_due.exchange(false) &&
      ++ep->cm_passes < kCmPassInterval) {
    return;
  }
  ep->cm_passes = 0;
  ep->cm_engine()->Run();
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  DrainEq(ep);
}

bool RxmCmEvents::PrepareToSleep() {
  RxmEp* ep = ep_;
  ep->cm_due.store(true);
  return ep->cm_engine()->PrepareToSleep() &&
         EqTryWait(&ep->eq->fid) == 0;
}

int RxmCmEvents::progress_fd() const { return ep_->cm_engine()->fd(); }

bool RxmCmEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

int OpenRxmEp(fid_domain* domain_fid, fi_info* info, const fi_info& msg_info,
              fid_ep** ep_out, void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  auto ep = std::make_unique<RxmEp>();
  ep->base.util.ep_fid = {};
  ep->msg_info = DupInfo(msg_info);
  absl::Status status =
      ep->msg_info == nullptr
          ? FiError(FI_ENOMEM, "fi_endpoint: out of memory")
          : InitUtilEndpoint(&ep->base.util, domain, info, context,
                             &kRxmEpFidOps);
  if (!status.ok()) {
    return LogFailure(log, FI_LOG_EP_CTRL, status, "fi_endpoint");
  }
  ep->msg_info->handle = nullptr;
  // The endpoint's progress runs the internal objects' (no thread of
  // theirs), and they are safe to call from any thread.
  fi_domain_attr* msg_domain_attr = ep->msg_info->domain_attr;
  msg_domain_attr->threading = FI_THREAD_SAFE;
  msg_domain_attr->data_progress = FI_PROGRESS_MANUAL;
  msg_domain_attr->control_progress = FI_PROGRESS_MANUAL;
  // A stream's pieces wait for its bounce receives, never refused: the
  // application's resource management applies to its own messages, on the
  // data path above the streams.
  msg_domain_attr->resource_mgmt = FI_RM_ENABLED;
  ep->register_buffers = (msg_domain_attr->mr_mode & FI_MR_LOCAL) != 0;
  ep->rma_reads = OffersRmaReads(*ep->msg_info);
  ep->virt_addr =
      (msg_domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) != 0;
  stream::InstallDataPathOps(&ep->base, *info, &kRxmCmOps);
  status = OpenInternals(ep.get());
  if (!status.ok()) {
    int rc = Fail(*ep, status);
    CloseRxmEp(&ep.release()->base.util.ep_fid.fid);
    return rc;
  }
  *ep_out = &ep.release()->base.util.ep_fid;
  return 0;
}

}  // namespace rxm
}  // namespace fabric

// The verbs MSG endpoint's connection management through librdmacm:
// fi_setname, fi_getname, fi_getpeer, fi_connect, fi_accept, fi_shutdown,
// its connection id and the events of its rdma_cm channel.
#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/passive_ep.h"
#include "fabric/providers/verbs/verbs_cm_address.h"
#include "fabric/providers/verbs/verbs_cm_events.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_requests.h"
#include "fabric/providers/verbs/verbs_srx.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// How long librdmacm may take to resolve an address or a route.
constexpr int kResolveTimeoutMs = 2000;
// RC retries: the most the 3-bit fields hold (7 for RNR: retry forever, as
// a receiver that has not posted its buffer yet is not an error).
constexpr uint8_t kRetryCount = 7;
constexpr uint8_t kRnrRetryCount = 7;
// How long a sender waits before retrying a send our receive queue had no
// buffer for (the IB encoding: 12 is 0.64 ms). The connection manager sets
// 0, which encodes the longest wait, 655 ms: a receiver a little behind
// then stalls its peer for most of a second per buffer it lacked.
constexpr uint8_t kMinRnrTimer = 12;

// Queues a connection event with the application's `data` after it.
void PostCmEvent(VerbsMsgEp* ep, uint32_t event,
                 const std::vector<uint8_t>& data) {
  PostConnectionEvent(&ep->util.eq->eq_fid, &ep->util.ep_fid.fid, event,
                      data.data(), data.size(), ep->log());
}

void PostCmError(VerbsMsgEp* ep, int err, int prov_errno,
                 const std::vector<uint8_t>& data) {
  PostConnectionError(&ep->util.eq->eq_fid, &ep->util.ep_fid.fid, err,
                      prov_errno, data.data(), data.size());
}

// Ends the connection attempt (or the connection) with `status`: the state
// moves on as for a failed rdma_cm step, and the EQ gets an error entry.
void FailConnection(VerbsMsgEp* ep, const absl::Status& status)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
          std::string(status.message()).c_str());
  CmStep step;
  step.kind = CmStep::kError;
  step.error = -ToFiErrno(status);
  MsgAction action = ep->state.OnStep(step);
  if (action.kind == MsgAction::kReportError) {
    PostCmError(ep, action.error, action.error, {});
  }
}

// The queue pair on the endpoint's id (which must be on the domain's
// device), then the receives posted before it existed.
absl::Status CreateQp(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  if (ep->id->verbs != ep->domain->context()) {
    return FiError(FI_EINVAL, "the connection's device is not the domain's "
                              "(the address is on another RDMA device)");
  }
  const fi_info& info = *ep->util.info;
  absl::StatusOr<ibv_qp_cap> caps =
      QpCaps(*info.tx_attr, *info.rx_attr, ep->domain->device_attr(),
             ep->domain->max_inline());
  if (!caps.ok()) return caps.status();
  ibv_qp_init_attr attr = QpInitAttr(ep, ep->device_cq, *caps, IBV_QPT_RC);
  if (ep->srx != nullptr) {
    // Receives come from the shared queue: none of its own.
    attr.srq = ep->srx->srq;
    attr.cap.max_recv_wr = 0;
    attr.cap.max_recv_sge = 0;
  }
  if (ep->api().create_qp(ep->id, ep->domain->pd(), &attr) != 0) {
    return CallFailed("rdma_create_qp");
  }
  ep->qp = ep->id->qp;
  ep->max_inline = attr.cap.max_inline_data;
  if (int rc = PostEarlyReceives(ep); rc != 0) {
    return FiError(-rc, "posting the receives kept until the connection");
  }
  return absl::OkStatus();
}

// What the endpoint offers for RDMA reads and atomics on a connect, and
// (within what the requester offered) on an accept.
rdma_conn_param ConnParam(const VerbsMsgEp& ep,
                          const std::vector<uint8_t>& private_data, bool accept)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep.util.mutex) {
  const ibv_device_attr& device = ep.domain->device_attr();
  rdma_conn_param param = {};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<uint8_t>(private_data.size());
  int responder = std::min(device.max_qp_rd_atom, 255);
  int initiator = std::min(device.max_qp_init_rd_atom, 255);
  if (accept) {
    // The request's event has them from this side's point of view already
    // (the CM swaps the requester's initiator depth and responder
    // resources).
    responder = std::min<int>(responder, ep.responder_resources);
    initiator = std::min<int>(initiator, ep.initiator_depth);
  }
  param.responder_resources = static_cast<uint8_t>(responder);
  param.initiator_depth = static_cast<uint8_t>(initiator);
  param.retry_count = kRetryCount;
  param.rnr_retry_count = kRnrRetryCount;
  return param;
}

// Sets the queue pair's RNR timer (kMinRnrTimer), once it is ready to
// send (RTS): librdmacm has moved it there when rdma_accept returns or the
// connection is established. A failure only costs time: it is logged.
void SetMinRnrTimer(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  if (ep->qp == nullptr) return;
  ibv_qp_attr attr = {};
  attr.min_rnr_timer = kMinRnrTimer;
  if (ep->api().modify_qp(ep->qp, &attr, IBV_QP_MIN_RNR_TIMER) != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
            std::string(CallFailed("ibv_modify_qp (min_rnr_timer)").message())
                .c_str());
  }
}

// Performs `action`, the state's answer to an rdma_cm event carrying the
// application's `data`.
void Perform(VerbsMsgEp* ep, const MsgAction& action,
             const std::vector<uint8_t>& data, int prov_errno)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  switch (action.kind) {
    case MsgAction::kNone:
      return;
    case MsgAction::kResolveRoute:
      if (ep->api().resolve_route(ep->id, kResolveTimeoutMs) != 0) {
        FailConnection(ep, CallFailed("rdma_resolve_route"));
      }
      return;
    case MsgAction::kCreateQpAndConnect: {
      absl::Status created = CreateQp(ep);
      if (!created.ok()) return FailConnection(ep, created);
      rdma_conn_param param = ConnParam(*ep, ep->connect_data, false);
      if (ep->api().connect(ep->id, &param) != 0) {
        FailConnection(ep, CallFailed("rdma_connect"));
      }
      return;
    }
    case MsgAction::kReportConnected:
      SetMinRnrTimer(ep);
      PostCmEvent(ep, FI_CONNECTED, data);
      return;
    case MsgAction::kReportShutdown:
      // Posted work flushes (FI_ECANCELED entries) once the queue pair is
      // in the error state, whichever side disconnected.
      MoveQpToError(ep);
      PostCmEvent(ep, FI_SHUTDOWN, {});
      return;
    case MsgAction::kReportError:
      PostCmError(ep, action.error, prov_errno, data);
      return;
  }
}

// --- connection management -------------------------------------------------

int SetName(fid* object, void* addr, size_t addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (ep->state.state() != MsgState::kIdle || ep->qp != nullptr) {
    return FailEp(*ep, FI_EOPBADSTATE, "fi_setname: the endpoint is in use");
  }
  absl::StatusOr<CmAddress> address =
      CmAddressOf(ep->util.info->addr_format, addr, addrlen);
  if (!address.ok()) return FailEp(*ep, address.status());
  if (ep->api().bind_addr(ep->id, address->address()) != 0) {
    return FailEp(*ep, CallFailed("rdma_bind_addr"));
  }
  return 0;
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (addrlen == nullptr) return FailEp(*ep, FI_EINVAL, "fi_getname: addrlen");
  absl::StatusOr<CmAddress> address =
      CmAddressFrom(&ep->id->route.addr.src_addr);
  if (!address.ok()) return FailEp(*ep, address.status());
  return CopyCmAddressOut(*address, addr, addrlen);
}

int GetPeer(fid_ep* ep_fid, void* addr, size_t* addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (addrlen == nullptr) return FailEp(*ep, FI_EINVAL, "fi_getpeer: addrlen");
  absl::StatusOr<CmAddress> address =
      CmAddressFrom(&ep->id->route.addr.dst_addr);
  if (!address.ok()) return FailEp(*ep, FI_ENOTCONN, "fi_getpeer: no peer");
  return CopyCmAddressOut(*address, addr, addrlen);
}

// The application's connection data of `call` (fi_connect, fi_accept): 0,
// or -FI_EINVAL (logged) for more than kCmDataSize bytes or none at NULL.
int CheckConnectionData(const VerbsMsgEp& ep, const char* call,
                        const void* param, size_t paramlen) {
  if (paramlen <= kCmDataSize && (paramlen == 0 || param != nullptr)) {
    return 0;
  }
  return FailEp(ep, FI_EINVAL,
                absl::StrCat(call, ": connection data of ", paramlen,
                             " bytes (at most ", kCmDataSize, ")"));
}

// A connection that failed as fi_connect or fi_accept started it: the
// state takes the error, which is logged and returned.
int FailConnecting(VerbsMsgEp* ep, const absl::Status& failed)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  CmStep step;
  step.kind = CmStep::kError;
  step.error = -ToFiErrno(failed);
  ep->state.OnStep(step);
  return FailEp(*ep, failed);
}

int Connect(fid_ep* ep_fid, const void* addr, const void* param,
            size_t paramlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (int rc = CheckConnectionData(*ep, "fi_connect", param, paramlen);
      rc != 0) {
    return rc;
  }
  if (addr == nullptr) {
    return FailEp(*ep, FI_EINVAL, "fi_connect: addr is NULL");
  }
  const uint32_t format = ep->util.info->addr_format;
  absl::StatusOr<CmAddress> peer =
      CmAddressOf(format, addr, CmAddressLength(addr));
  if (!peer.ok()) return FailEp(*ep, peer.status());
  if (ep->from_request || ep->state.state() != MsgState::kIdle ||
      ep->qp != nullptr) {
    return FailEp(*ep, FI_EOPBADSTATE, "fi_connect: the endpoint is in use "
                                       "(or was opened on a connection "
                                       "request: fi_accept it)");
  }
  if (int rc = Enable(ep); rc != 0) return rc;
  if (int rc = ep->state.Connect(); rc != 0) {
    return FailEp(*ep, -rc, "fi_connect: the endpoint is in use");
  }
  ep->connect_data = PackCmData(param, paramlen);
  WatchCmEvents(ep);
  // The source is the bound one (info->src_addr or fi_setname), if any.
  if (ep->api().resolve_addr(ep->id, nullptr, peer->address(),
                             kResolveTimeoutMs) != 0) {
    return FailConnecting(ep, CallFailed("rdma_resolve_addr"));
  }
  return 0;
}

int Accept(fid_ep* ep_fid, const void* param, size_t paramlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (int rc = CheckConnectionData(*ep, "fi_accept", param, paramlen);
      rc != 0) {
    return rc;
  }
  if (!ep->from_request || ep->qp != nullptr ||
      ep->state.state() != MsgState::kIdle) {
    return FailEp(*ep, FI_EOPBADSTATE, "fi_accept: the endpoint was not "
                                       "opened on a connection request");
  }
  if (int rc = Enable(ep); rc != 0) return rc;
  if (int rc = ep->state.Accept(); rc != 0) {
    return FailEp(*ep, -rc, "fi_accept: the endpoint is in use");
  }
  WatchCmEvents(ep);
  absl::Status created = CreateQp(ep);
  std::vector<uint8_t> data = PackCmData(param, paramlen);
  rdma_conn_param conn = ConnParam(*ep, data, true);
  if (created.ok() && ep->api().accept(ep->id, &conn) != 0) {
    created = CallFailed("rdma_accept");
  }
  // At once: the requester sends as soon as it hears of the accept.
  if (created.ok()) SetMinRnrTimer(ep);
  if (!created.ok()) {
    // The requester hears at once instead of at its CM's timeout.
    ep->api().reject(ep->id, nullptr, 0);
    return FailConnecting(ep, created);
  }
  return 0;
}

int Shutdown(fid_ep* ep_fid, uint64_t flags) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (flags != 0) return FailEp(*ep, FI_EBADFLAGS, "fi_shutdown: flags");
  if (int rc = ep->state.Shutdown(); rc != 0) {
    return FailEp(*ep, -rc, "fi_shutdown: not connected");
  }
  if (ep->state.ShutdownNeedsDisconnect() &&
      ep->api().disconnect(ep->id) != 0) {
    return FailEp(*ep, CallFailed("rdma_disconnect"));
  }
  return 0;
}

}  // namespace

fi_ops_cm kMsgEpCmOps = ConnectedCmOps({.setname = SetName,
                                        .getname = GetName,
                                        .getpeer = GetPeer,
                                        .connect = Connect,
                                        .accept = Accept,
                                        .shutdown = Shutdown});

// The endpoint's rdma_cm channel and connection id: a fresh id, or the
// connection request's moved onto the channel.
absl::Status OpenConnectionId(VerbsMsgEp* ep, const fi_info& info) {
  const VerbsApi& api = ep->api();
  ep->cm_channel = api.create_event_channel();
  if (ep->cm_channel == nullptr) {
    return CallFailed("rdma_create_event_channel");
  }
  FABRIC_RETURN_IF_ERROR(
      MakeNonBlocking(ep->cm_channel->fd, "the rdma_cm event channel"));
  if (info.handle != nullptr) {
    VerbsConnReq request;
    if (!TakeVerbsConnReq(info.handle, &request)) {
      return FiError(FI_EINVAL, "fi_endpoint: info->handle is not a pending "
                                "connection request");
    }
    ep->id = request.id;
    ep->id->context = ep;
    ep->from_request = true;
    ep->responder_resources = request.responder_resources;
    ep->initiator_depth = request.initiator_depth;
    if (api.migrate_id(ep->id, ep->cm_channel) != 0) {
      return CallFailed("rdma_migrate_id");
    }
    return absl::OkStatus();
  }
  if (api.create_id(ep->cm_channel, &ep->id, ep, RDMA_PS_TCP) != 0) {
    ep->id = nullptr;
    return CallFailed("rdma_create_id");
  }
  if (info.src_addr != nullptr) {
    absl::StatusOr<CmAddress> source =
        CmAddressOf(info.addr_format, info.src_addr, info.src_addrlen);
    if (!source.ok()) return source.status();
    if (api.bind_addr(ep->id, source->address()) != 0) {
      return CallFailed("rdma_bind_addr");
    }
  }
  return absl::OkStatus();
}

// --- events from librdmacm and the device ----------------------------------

// Acts on the connection's pending rdma_cm events; the lock is held (so
// events are taken and acted on in order, whichever engine reads them).
void ReadCmEventsLocked(VerbsMsgEp* ep) {
  const VerbsApi& api = ep->api();
  rdma_cm_event* event = nullptr;
  while (api.get_cm_event(ep->cm_channel, &event) == 0) {
    CmStep step = StepOf(EnumValue(event->event), event->status);
    std::vector<uint8_t> data;
    if (step.carries_data) {
      absl::StatusOr<std::vector<uint8_t>> unpacked =
          UnpackCmData(event->param.conn.private_data,
                       event->param.conn.private_data_len);
      if (unpacked.ok()) {
        data = *std::move(unpacked);
      } else {
        FI_WARN(ep->log(), FI_LOG_EP_CTRL, "connection data dropped: %s\n",
                std::string(unpacked.status().message()).c_str());
      }
    }
    const int status = event->status;
    FI_DBG(ep->log(), FI_LOG_EP_CTRL, "rdma_cm event %s (status %d)\n",
           api.event_str(event->event), status);
    // Acked before acting: nothing below needs the event, and destroying
    // the id later waits for every event of it to be acked.
    api.ack_cm_event(event);
    Perform(ep, ep->state.OnStep(step), data, status);
  }
}

void VerbsCmEvents::Progress() {
  MutexLock<OptionalMutex> lock(ep_->util.mutex);
  ReadCmEventsLocked(ep_);
}

int VerbsCmEvents::progress_fd() const { return ep_->cm_channel->fd; }

bool VerbsCmEvents::auto_progress() const {
  return ep_->util.domain->info->domain_attr->control_progress ==
         FI_PROGRESS_AUTO;
}

}  // namespace verbs
}  // namespace fabric

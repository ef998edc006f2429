// The verbs MSG endpoint's life: fi_endpoint, fi_ep_bind, fi_enable (its
// ibv CQ), connection management through librdmacm (fi_connect, fi_accept,
// fi_shutdown, the events of its rdma_cm channel) and its completions.
#include "fabric/providers/verbs/verbs_msg_ep.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/passive_ep.h"
#include "fabric/providers/verbs/verbs_attr.h"
#include "fabric/providers/verbs/verbs_cm_address.h"
#include "fabric/providers/verbs/verbs_cm_events.h"
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
// How long the CQ of a closing endpoint on a shared receive context must
// stay empty before its flushed receives are all counted back.
constexpr int kDrainQuietMs = 5;

int Fail(const VerbsMsgEp& ep, const absl::Status& status) {
  FI_WARN(ep.log(), FI_LOG_EP_CTRL, "%s\n",
          std::string(status.message()).c_str());
  return ToFiErrno(status);
}

int Fail(const VerbsMsgEp& ep, int fi_errno, const std::string& what) {
  return Fail(ep, FiError(fi_errno, what));
}

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
void FailConnection(VerbsMsgEp* ep, const absl::Status& status) {
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
absl::Status CreateQp(VerbsMsgEp* ep) {
  if (ep->id->verbs != ep->domain->context()) {
    return FiError(FI_EINVAL, "the connection's device is not the domain's "
                              "(the address is on another RDMA device)");
  }
  const fi_info& info = *ep->util.info;
  absl::StatusOr<ibv_qp_cap> caps =
      QpCaps(*info.tx_attr, *info.rx_attr, ep->domain->device_attr(),
             ep->domain->max_inline());
  if (!caps.ok()) return caps.status();
  ibv_qp_init_attr attr = {};
  attr.qp_context = ep;
  attr.send_cq = ep->device_cq.cq;
  attr.recv_cq = ep->device_cq.cq;
  attr.cap = *caps;
  if (ep->srx != nullptr) {
    // Receives come from the shared queue: none of its own.
    attr.srq = ep->srx->srq;
    attr.cap.max_recv_wr = 0;
    attr.cap.max_recv_sge = 0;
  }
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;
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
                          const std::vector<uint8_t>& private_data,
                          bool accept) {
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
void SetMinRnrTimer(VerbsMsgEp* ep) {
  if (ep->qp == nullptr) return;
  ibv_qp_attr attr = {};
  attr.min_rnr_timer = kMinRnrTimer;
  if (ep->api().modify_qp(ep->qp, &attr, IBV_QP_MIN_RNR_TIMER) != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
            std::string(CallFailed("ibv_modify_qp (min_rnr_timer)").message())
                .c_str());
  }
}

// Moves the queue pair (if any) to the error state: its posted work
// flushes. A failure is logged.
void MoveQpToError(VerbsMsgEp* ep) {
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_ERR;
  if (ep->qp != nullptr &&
      ep->api().modify_qp(ep->qp, &attr, IBV_QP_STATE) != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
            std::string(CallFailed("ibv_modify_qp to ERR").message())
                .c_str());
  }
}

// Performs `action`, the state's answer to an rdma_cm event carrying the
// application's `data`.
void Perform(VerbsMsgEp* ep, const MsgAction& action,
             const std::vector<uint8_t>& data, int prov_errno) {
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

// Makes the endpoint its CQs' direct producer (util/cq.h), or no longer.
void SetDirectProducer(VerbsMsgEp* ep, bool set) {
  UtilCq* tx = ep->util.tx_cq;
  UtilCq* rx = ep->util.rx_cq;
  for (UtilCq* cq : {tx, rx == tx ? nullptr : rx}) {
    if (cq == nullptr) continue;
    if (set) {
      CqSetDirect(cq, &ep->completions, (cq == tx) + (cq == rx));
    } else {
      CqClearDirect(cq, &ep->completions);
    }
  }
}

// fi_enable: the CQ and its completion channel, the request slots, and the
// scratch words of fi_atomic.
int Enable(VerbsMsgEp* ep) {
  if (ep->util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->util); rc != 0) return rc;
  const fi_info& info = *ep->util.info;
  const VerbsApi& api = ep->api();
  const size_t tx = std::max<size_t>(info.tx_attr->size, 1);
  const size_t rx = std::max<size_t>(info.rx_attr->size, 1);
  // Every queue entry may complete at once: the CQ holds them all. With a
  // shared receive context, every entry of the SRQ may complete here.
  const size_t receives = ep->srx != nullptr ? ep->srx->posted.size() : rx;
  const int max_cqe = ep->domain->device_attr().max_cqe;
  if (tx + receives > static_cast<size_t>(std::max(max_cqe, 0))) {
    return Fail(*ep, FI_EINVAL,
                absl::StrCat("fi_enable: ", tx, " transmits and ", receives,
                             " receives exceed the device's max_cqe (",
                             max_cqe, ")"));
  }
  // A failed fi_enable may be retried: what it made stays until close.
  absl::Status opened =
      OpenDeviceCq(*ep->domain, tx + receives, ep, &ep->device_cq);
  if (!opened.ok()) return Fail(*ep, opened);
  ep->slots.Init(tx, rx);
  if ((info.caps & FI_ATOMIC) != 0 && ep->scratch_mr == nullptr) {
    ep->atomic_scratch.assign(tx, 0);
    ep->scratch_mr =
        api.reg_mr(ep->domain->pd(), ep->atomic_scratch.data(),
                   tx * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
    if (ep->scratch_mr == nullptr) {
      return Fail(*ep, CallFailed("ibv_reg_mr of the atomic scratch words"));
    }
  }
  ep->completions_registered = true;
  ep->data_engine()->Add(&ep->completions);
  SetDirectProducer(ep, true);
  ep->util.enabled.store(true);
  return 0;
}

// Starts reading the endpoint's rdma_cm channel.
void WatchCmEvents(VerbsMsgEp* ep) {
  if (ep->cm_registered) return;
  ep->cm_registered = true;
  ep->cm_engine()->Add(&ep->cm_events);
}

// Before an endpoint on a shared receive context closes: the receives its
// queue pair took from the SRQ (completed and not yet read, or under way)
// go back to the context, unreported, so that its slots are not lost. The
// queue pair in the error state flushes what it had under way; the device
// may take a moment, so the CQ is read until it stays empty for
// kDrainQuietMs.
void ReturnSharedReceives(VerbsMsgEp* ep) {
  MoveQpToError(ep);
  auto quiet_since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - quiet_since <
         std::chrono::milliseconds(kDrainQuietMs)) {
    size_t n = PollCq(ep->device_cq.cq, ep->log(), [](const ibv_wc& wc) {
      auto* posted = reinterpret_cast<Posted*>(wc.wr_id);
      if (posted->srx != nullptr) ReleaseSrxSlot(posted->srx, posted);
    });
    if (n > 0) quiet_since = std::chrono::steady_clock::now();
  }
}

int CloseMsgEp(fid* object) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  const VerbsApi& api = ep->api();
  if (ep->completions_registered) SetDirectProducer(ep, false);
  // The data pass reads connection events too: it goes first.
  if (ep->completions_registered) ep->data_engine()->Remove(&ep->completions);
  if (ep->cm_registered) ep->cm_engine()->Remove(&ep->cm_events);
  if (ep->state.state() == MsgState::kConnected && ep->id != nullptr) {
    api.disconnect(ep->id);
  }
  ep->slots.Unreserve(&ep->util);
  if (ep->srx != nullptr && ep->qp != nullptr) ReturnSharedReceives(ep);
  if (ep->qp != nullptr) api.destroy_qp(ep->id);
  if (ep->srx != nullptr) ep->srx->bound.fetch_sub(1);
  if (ep->id != nullptr) api.destroy_id(ep->id);
  if (ep->cm_channel != nullptr) api.destroy_event_channel(ep->cm_channel);
  if (ep->scratch_mr != nullptr) api.dereg_mr(ep->scratch_mr);
  CloseDeviceCq(api, &ep->device_cq);
  ReleaseUtilEndpoint(&ep->util);
  delete ep;
  return 0;
}

int BindMsgEp(fid* object, fid* bound, uint64_t flags) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (bound != nullptr && bound->fclass == FI_CLASS_AV) {
    return Fail(*ep, FI_EINVAL, "fi_ep_bind: an MSG endpoint takes no AV");
  }
  if (bound != nullptr && bound->fclass == FI_CLASS_SRX_CTX) {
    VerbsSrx* srx = AsVerbsSrx(bound);
    if (srx == nullptr || srx->util_domain != ep->util.domain) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: not a shared receive context "
                                  "of the endpoint's domain");
    }
    if (flags != 0) {
      return Fail(*ep, FI_EBADFLAGS, "fi_ep_bind: a shared receive context "
                                     "binds with flags 0");
    }
    if (ep->srx != nullptr || ep->util.enabled.load()) {
      return Fail(*ep, FI_EOPBADSTATE,
                  "fi_ep_bind: a shared receive context binds once, before "
                  "fi_enable");
    }
    ep->srx = srx;
    srx->bound.fetch_add(1);
    return 0;
  }
  return BindUtilEndpoint(&ep->util, bound, flags);
}

int ControlMsgEp(fid* object, int command, void* arg) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  if (command == kControlGetCqDirectProducer) {
    if (arg == nullptr || !ep->util.enabled.load()) {
      return Fail(*ep, FI_EINVAL,
                  "fi_control: the CQ producer of an enabled endpoint, "
                  "into a non-NULL pointer");
    }
    *static_cast<CqDirectProducer**>(arg) = &ep->completions;
    return 0;
  }
  return ControlUtilEndpoint(&ep->util, command, arg);
}

// --- connection management -------------------------------------------------

int SetName(fid* object, void* addr, size_t addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (ep->state.state() != MsgState::kIdle || ep->qp != nullptr) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_setname: the endpoint is in use");
  }
  absl::StatusOr<CmAddress> address =
      CmAddressOf(ep->util.info->addr_format, addr, addrlen);
  if (!address.ok()) return Fail(*ep, address.status());
  if (ep->api().bind_addr(ep->id, address->address()) != 0) {
    return Fail(*ep, CallFailed("rdma_bind_addr"));
  }
  return 0;
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(reinterpret_cast<fid_ep*>(object));
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (addrlen == nullptr) return Fail(*ep, FI_EINVAL, "fi_getname: addrlen");
  absl::StatusOr<CmAddress> address =
      CmAddressFrom(&ep->id->route.addr.src_addr);
  if (!address.ok()) return Fail(*ep, address.status());
  return CopyCmAddressOut(*address, addr, addrlen);
}

int GetPeer(fid_ep* ep_fid, void* addr, size_t* addrlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (addrlen == nullptr) return Fail(*ep, FI_EINVAL, "fi_getpeer: addrlen");
  absl::StatusOr<CmAddress> address =
      CmAddressFrom(&ep->id->route.addr.dst_addr);
  if (!address.ok()) return Fail(*ep, FI_ENOTCONN, "fi_getpeer: no peer");
  return CopyCmAddressOut(*address, addr, addrlen);
}

int Connect(fid_ep* ep_fid, const void* addr, const void* param,
            size_t paramlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (paramlen > kCmDataSize || (paramlen > 0 && param == nullptr)) {
    return Fail(*ep, FI_EINVAL,
                absl::StrCat("fi_connect: connection data of ", paramlen,
                             " bytes (at most ", kCmDataSize, ")"));
  }
  if (addr == nullptr) return Fail(*ep, FI_EINVAL, "fi_connect: addr is NULL");
  const uint32_t format = ep->util.info->addr_format;
  absl::StatusOr<CmAddress> peer =
      CmAddressOf(format, addr, CmAddressLength(addr));
  if (!peer.ok()) return Fail(*ep, peer.status());
  if (ep->from_request || ep->state.state() != MsgState::kIdle ||
      ep->qp != nullptr) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_connect: the endpoint is in use "
                                     "(or was opened on a connection "
                                     "request: fi_accept it)");
  }
  if (int rc = Enable(ep); rc != 0) return rc;
  if (int rc = ep->state.Connect(); rc != 0) {
    return Fail(*ep, -rc, "fi_connect: the endpoint is in use");
  }
  ep->connect_data = PackCmData(param, paramlen);
  WatchCmEvents(ep);
  // The source is the bound one (info->src_addr or fi_setname), if any.
  if (ep->api().resolve_addr(ep->id, nullptr, peer->address(),
                             kResolveTimeoutMs) != 0) {
    absl::Status failed = CallFailed("rdma_resolve_addr");
    CmStep step;
    step.kind = CmStep::kError;
    step.error = -ToFiErrno(failed);
    ep->state.OnStep(step);
    return Fail(*ep, failed);
  }
  return 0;
}

int Accept(fid_ep* ep_fid, const void* param, size_t paramlen) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (paramlen > kCmDataSize || (paramlen > 0 && param == nullptr)) {
    return Fail(*ep, FI_EINVAL,
                absl::StrCat("fi_accept: connection data of ", paramlen,
                             " bytes (at most ", kCmDataSize, ")"));
  }
  if (!ep->from_request || ep->qp != nullptr ||
      ep->state.state() != MsgState::kIdle) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_accept: the endpoint was not "
                                     "opened on a connection request");
  }
  if (int rc = Enable(ep); rc != 0) return rc;
  if (int rc = ep->state.Accept(); rc != 0) {
    return Fail(*ep, -rc, "fi_accept: the endpoint is in use");
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
    CmStep step;
    step.kind = CmStep::kError;
    step.error = -ToFiErrno(created);
    ep->state.OnStep(step);
    return Fail(*ep, created);
  }
  return 0;
}

int Shutdown(fid_ep* ep_fid, uint64_t flags) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (flags != 0) return Fail(*ep, FI_EBADFLAGS, "fi_shutdown: flags");
  if (int rc = ep->state.Shutdown(); rc != 0) {
    return Fail(*ep, -rc, "fi_shutdown: not connected");
  }
  if (ep->state.ShutdownNeedsDisconnect() &&
      ep->api().disconnect(ep->id) != 0) {
    return Fail(*ep, CallFailed("rdma_disconnect"));
  }
  return 0;
}

fi_ops kMsgEpFidOps = MakeFidOps(
    {.close = CloseMsgEp, .bind = BindMsgEp, .control = ControlMsgEp});

fi_ops_cm kMsgEpCmOps = {
    sizeof(fi_ops_cm), SetName, GetName,  GetPeer,  Connect,
    NoListen,          Accept,  NoReject, Shutdown, NoJoin,
};

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

}  // namespace

// --- events from librdmacm and the device ----------------------------------

// Acts on the connection's pending rdma_cm events; the lock is held (so
// events are taken and acted on in order, whichever engine reads them).
void ReadCmEventsLocked(VerbsMsgEp* ep) {
  const VerbsApi& api = ep->api();
  rdma_cm_event* event = nullptr;
  while (api.get_cm_event(ep->cm_channel, &event) == 0) {
    CmStep step = StepOf(event->event, event->status);
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
  std::lock_guard<OptionalMutex> lock(ep_->util.mutex);
  ReadCmEventsLocked(ep_);
}

int VerbsCmEvents::progress_fd() const { return ep_->cm_channel->fd; }

bool VerbsCmEvents::auto_progress() const {
  return ep_->util.domain->info->domain_attr->control_progress ==
         FI_PROGRESS_AUTO;
}

int OpenVerbsMsgEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                   void* context) {
  auto* domain = reinterpret_cast<UtilDomain*>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  if (info->ep_attr->type != FI_EP_MSG) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: verbs has FI_EP_MSG "
                                 "endpoints only in this version\n");
    return -FI_ENOSYS;
  }
  if (info->tx_attr == nullptr || info->rx_attr == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: info needs tx_attr and "
                                 "rx_attr\n");
    return -FI_EINVAL;
  }
  if (domain->resources == nullptr ||
      domain->info->ep_attr->type != FI_EP_MSG) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: an FI_EP_MSG endpoint needs "
                                 "a domain opened for FI_EP_MSG\n");
    return -FI_EINVAL;
  }
  if (info->handle != nullptr && AsVerbsConnReq(info->handle) == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: info->handle is not a "
                                 "pending connection request\n");
    return -FI_EINVAL;
  }
  auto* ep = new VerbsMsgEp;
  ep->util.ep_fid = {};
  absl::Status status =
      InitUtilEndpoint(&ep->util, domain, info, context, &kMsgEpFidOps);
  if (!status.ok()) {
    delete ep;
    FI_WARN(log, FI_LOG_EP_CTRL, "%s\n", std::string(status.message()).c_str());
    return ToFiErrno(status);
  }
  ep->domain = ToVerbsDomain(domain);
  ep->registers_buffers =
      (domain->info->domain_attr->mr_mode & FI_MR_LOCAL) == 0;
  // Connection events arrive on the fabric's engine (EQ reads), which may
  // run on another thread than the endpoint's calls whatever the threading
  // model: the endpoint's state is always guarded.
  ep->util.mutex.set_needed(true);
  ep->util.ep_fid.cm = &kMsgEpCmOps;
  InstallVerbsDataOps(ep);
  status = OpenConnectionId(ep, *info);
  if (!status.ok()) {
    int rc = Fail(*ep, status);
    CloseMsgEp(&ep->util.ep_fid.fid);
    return rc;
  }
  *ep_out = &ep->util.ep_fid;
  return 0;
}

}  // namespace verbs
}  // namespace fabric

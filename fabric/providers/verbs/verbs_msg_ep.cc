// The verbs MSG endpoint's life: fi_endpoint, fi_ep_bind, fi_enable (its
// ibv CQ), fi_close; its connection management is verbs_msg_cm.cc.
#include "fabric/providers/verbs/verbs_msg_ep.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/verbs/verbs_attr.h"
#include "fabric/providers/verbs/verbs_srx.h"

namespace fabric {
namespace verbs {

// How long the CQ of a closing endpoint on a shared receive context must
// stay empty before its flushed receives are all counted back.
constexpr int kDrainQuietMs = 5;

int FailEp(const VerbsMsgEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

int FailEp(const VerbsMsgEp& ep, int fi_errno, const std::string& what) {
  return FailEp(ep, FiError(fi_errno, what));
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

namespace {

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

}  // namespace

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
    return FailEp(*ep, FI_EINVAL,
                  absl::StrCat("fi_enable: ", tx, " transmits and ", receives,
                               " receives exceed the device's max_cqe (",
                               max_cqe, ")"));
  }
  // A failed fi_enable may be retried: what it made stays until close.
  absl::Status opened =
      OpenDeviceCq(*ep->domain, tx + receives, ep, &ep->device_cq);
  if (!opened.ok()) return FailEp(*ep, opened);
  ep->slots.Init(tx, rx);
  if ((info.caps & FI_ATOMIC) != 0 && ep->scratch_mr == nullptr) {
    ep->atomic_scratch.assign(tx, 0);
    ep->scratch_mr =
        api.reg_mr(ep->domain->pd(), ep->atomic_scratch.data(),
                   tx * sizeof(uint64_t), IBV_ACCESS_LOCAL_WRITE);
    if (ep->scratch_mr == nullptr) {
      return FailEp(*ep, CallFailed("ibv_reg_mr of the atomic scratch words"));
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

namespace {

// Before an endpoint on a shared receive context closes: the receives its
// queue pair took from the SRQ (completed and not yet read, or under way)
// go back to the context, unreported, so that its slots are not lost. The
// queue pair in the error state flushes what it had under way; the device
// may take a moment, so the CQ is read until it stays empty for
// kDrainQuietMs.
void ReturnSharedReceives(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
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

// Without the endpoint's lock: the application makes no more calls on it,
// and once the engines have let go of it (Remove waits for a running pass)
// no progress pass touches it either.
int CloseMsgEp(fid* object) ABSL_NO_THREAD_SAFETY_ANALYSIS {
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
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (bound != nullptr && bound->fclass == FI_CLASS_AV) {
    return FailEp(*ep, FI_EINVAL, "fi_ep_bind: an MSG endpoint takes no AV");
  }
  if (bound != nullptr && bound->fclass == FI_CLASS_SRX_CTX) {
    VerbsSrx* srx = AsVerbsSrx(bound);
    if (srx == nullptr || srx->util_domain != ep->util.domain) {
      return FailEp(*ep, FI_EINVAL, "fi_ep_bind: not a shared receive context "
                                    "of the endpoint's domain");
    }
    if (flags != 0) {
      return FailEp(*ep, FI_EBADFLAGS, "fi_ep_bind: a shared receive context "
                                       "binds with flags 0");
    }
    if (ep->srx != nullptr || ep->util.enabled.load()) {
      return FailEp(*ep, FI_EOPBADSTATE,
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
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  if (command == kControlGetCqDirectProducer) {
    if (arg == nullptr || !ep->util.enabled.load()) {
      return FailEp(*ep, FI_EINVAL,
                    "fi_control: the CQ producer of an enabled endpoint, "
                    "into a non-NULL pointer");
    }
    *static_cast<CqDirectProducer**>(arg) = &ep->completions;
    return 0;
  }
  return ControlUtilEndpoint(&ep->util, command, arg);
}

fi_ops kMsgEpFidOps = MakeFidOps(
    {.close = CloseMsgEp, .bind = BindMsgEp, .control = ControlMsgEp});

}  // namespace

int OpenVerbsMsgEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                   void* context) {
  auto* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  if (EnumValue(info->ep_attr->type) != FI_EP_MSG) {
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
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  ep->domain = ToVerbsDomain(domain);
  ep->registers_buffers =
      (domain->info->domain_attr->mr_mode & FI_MR_LOCAL) == 0;
  // Connection events arrive on the fabric's engine (EQ reads), which may
  // run on another thread than the endpoint's calls whatever the threading
  // model: the endpoint's state is always guarded.
  ep->util.mutex.set_needed(true);
  ep->util.cm_data_size = kCmDataSize;
  InstallVerbsDataOps(ep, &kMsgEpCmOps);
  {
    // Not yet seen by any other thread: the lock only satisfies the
    // analysis.
    MutexLock<OptionalMutex> lock(ep->util.mutex);
    status = OpenConnectionId(ep, *info);
  }
  if (!status.ok()) {
    int rc = FailEp(*ep, status);
    CloseMsgEp(&ep->util.ep_fid.fid);
    return rc;
  }
  *ep_out = &ep->util.ep_fid;
  return 0;
}

}  // namespace verbs
}  // namespace fabric

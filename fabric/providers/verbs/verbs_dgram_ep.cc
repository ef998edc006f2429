// The verbs datagram endpoint's life: fi_endpoint, fi_ep_bind, fi_enable
// (its CQ and UD queue pair), fi_getname and its completions.
#include "fabric/providers/verbs/verbs_dgram_ep.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

int Fail(const VerbsDgramEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

int Fail(const VerbsDgramEp& ep, int fi_errno, const std::string& what) {
  return Fail(ep, FiError(fi_errno, what));
}

// The sender of a receive, for FI_SOURCE: found by the GID in its GRH and
// its queue pair number.
fi_addr_t SourceOf(VerbsDgramEp* ep, const ibv_wc& wc, const Posted& posted) {
  if ((ep->util.info->caps & FI_SOURCE) == 0 || ep->av == nullptr ||
      (wc.wc_flags & IBV_WC_GRH) == 0) {
    return FI_ADDR_NOTAVAIL;
  }
  absl::StatusOr<ibv_gid> gid =
      SenderGid(ep->grh[posted.index - ep->slots.tx_slots()].data());
  if (!gid.ok()) return FI_ADDR_NOTAVAIL;
  return UdSenderOf(ep->av, *gid, wc.src_qp);
}

// Takes one completion off the CQ and reports it.
void Complete(VerbsDgramEp* ep, const ibv_wc& wc) {
  auto* posted = reinterpret_cast<Posted*>(wc.wr_id);
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  if (wc.status == IBV_WC_SUCCESS) {
    entry = CompletionOf(wc, posted->request);
    if (!posted->transmit) {
      // The device counts the GRH's 40 bytes in the length.
      const size_t len = wc.byte_len >= kGrhSize ? wc.byte_len - kGrhSize : 0;
      const size_t room = ep->room[posted->index - ep->slots.tx_slots()];
      entry.len = std::min(len, room);
      if (len > room) {
        // The rest went to the overflow buffer.
        ReportError(&ep->util, ep->util.rx_cq, posted->reserved, entry,
                    FI_ETRUNC, len - room, posted->cntr);
        ep->slots.Release(posted);
        return;
      }
      source = SourceOf(ep, wc, *posted);
    }
  }
  ReportWorkCompletion(&ep->util, ep->api(), ep->log(), wc, *posted, entry,
                       source);
  ep->slots.Release(posted);
}

size_t PollAll(VerbsDgramEp* ep) {
  return PollCq(ep->device_cq.cq, ep->log(),
                [ep](const ibv_wc& wc) { Complete(ep, wc); });
}

// Moves the new UD queue pair through INIT and RTR to RTS: it sends and
// receives from then on.
absl::Status ReadyQp(VerbsDgramEp* ep) {
  const VerbsApi& api = ep->api();
  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = ep->port.number;
  attr.qkey = kUdQkey;
  if (api.modify_qp(ep->qp, &attr,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                        IBV_QP_QKEY) != 0) {
    return CallFailed("ibv_modify_qp to INIT");
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  if (api.modify_qp(ep->qp, &attr, IBV_QP_STATE) != 0) {
    return CallFailed("ibv_modify_qp to RTR");
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  if (api.modify_qp(ep->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
    return CallFailed("ibv_modify_qp to RTS");
  }
  return absl::OkStatus();
}

// The UD queue pair: its receives take two scatter-gather entries more
// than rx_attr says (the GRH's and the overflow's).
absl::Status CreateQp(VerbsDgramEp* ep) {
  const fi_info& info = *ep->util.info;
  fi_rx_attr rx = *info.rx_attr;
  rx.iov_limit += 2;
  absl::StatusOr<ibv_qp_cap> caps = QpCaps(
      *info.tx_attr, rx, ep->domain->device_attr(), info.tx_attr->inject_size);
  if (!caps.ok()) return caps.status();
  ibv_qp_init_attr attr = QpInitAttr(ep, ep->device_cq, *caps, IBV_QPT_UD);
  ep->qp = ep->api().create_queue_pair(ep->domain->pd(), &attr);
  if (ep->qp == nullptr) return CallFailed("ibv_create_qp (UD)");
  ep->max_inline = attr.cap.max_inline_data;
  return ReadyQp(ep);
}

// fi_enable: the CQ and its completion channel, the request slots with
// their GRH buffers, and the queue pair.
int Enable(VerbsDgramEp* ep) {
  if (ep->util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->util); rc != 0) return rc;
  const fi_info& info = *ep->util.info;
  const VerbsApi& api = ep->api();
  const size_t tx = std::max<size_t>(info.tx_attr->size, 1);
  const size_t rx = std::max<size_t>(info.rx_attr->size, 1);
  const int max_cqe = ep->domain->device_attr().max_cqe;
  if (tx + rx > static_cast<size_t>(std::max(max_cqe, 0))) {
    return Fail(*ep, FI_EINVAL,
                absl::StrCat("fi_enable: ", tx, " transmits and ", rx,
                             " receives exceed the device's max_cqe (",
                             max_cqe, ")"));
  }
  // A failed fi_enable may be retried: what it made stays until close.
  absl::Status opened = OpenDeviceCq(*ep->domain, tx + rx, ep, &ep->device_cq);
  if (!opened.ok()) return Fail(*ep, opened);
  ep->slots.Init(tx, rx);
  ep->grh.resize(rx);
  ep->room.resize(rx);
  // A peer may send up to the port's MTU whatever this info says.
  ep->overflow.resize(MtuBytes(ep->port.active_mtu));
  if (ep->grh_mr == nullptr) {
    ep->grh_mr = api.reg_mr(ep->domain->pd(), ep->grh.data(),
                            ep->grh.size() * kGrhSize,
                            IBV_ACCESS_LOCAL_WRITE);
    if (ep->grh_mr == nullptr) {
      return Fail(*ep, CallFailed("ibv_reg_mr of the GRH buffers"));
    }
  }
  if (ep->overflow_mr == nullptr) {
    ep->overflow_mr = api.reg_mr(ep->domain->pd(), ep->overflow.data(),
                                 ep->overflow.size(), IBV_ACCESS_LOCAL_WRITE);
    if (ep->overflow_mr == nullptr) {
      return Fail(*ep, CallFailed("ibv_reg_mr of the overflow buffer"));
    }
  }
  if (ep->qp == nullptr) {
    absl::Status created = CreateQp(ep);
    if (!created.ok()) {
      if (ep->qp != nullptr) api.destroy_queue_pair(ep->qp);
      ep->qp = nullptr;
      return Fail(*ep, created);
    }
  }
  ep->completions_registered = true;
  ep->util.domain->progress->Add(&ep->completions);
  ep->util.enabled.store(true);
  return 0;
}

int CloseDgramEp(fid* object) {
  VerbsDgramEp* ep = ToVerbsDgramEp(reinterpret_cast<fid_ep*>(object));
  const VerbsApi& api = ep->api();
  if (ep->completions_registered) {
    ep->util.domain->progress->Remove(&ep->completions);
  }
  ep->slots.Unreserve(&ep->util);
  if (ep->qp != nullptr) api.destroy_queue_pair(ep->qp);
  if (ep->grh_mr != nullptr) api.dereg_mr(ep->grh_mr);
  if (ep->overflow_mr != nullptr) api.dereg_mr(ep->overflow_mr);
  CloseDeviceCq(api, &ep->device_cq);
  ReleaseUtilEndpoint(&ep->util);
  delete ep;
  return 0;
}

int BindDgramEp(fid* object, fid* bound, uint64_t flags) {
  VerbsDgramEp* ep = ToVerbsDgramEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (bound == nullptr || bound->fclass != FI_CLASS_AV) {
    return BindUtilEndpoint(&ep->util, bound, flags);
  }
  VerbsUdAv* av = AsVerbsUdAv(bound);
  if (av == nullptr || av->util.domain != ep->util.domain) {
    return Fail(*ep, FI_EINVAL, "fi_ep_bind: not an AV of the endpoint's "
                                "domain");
  }
  if (flags != 0 || ep->av != nullptr || ep->util.enabled.load()) {
    return Fail(*ep, FI_EINVAL, "fi_ep_bind: one AV, with flags 0, before "
                                "fi_enable");
  }
  ep->av = av;
  ep->util.av = &av->util;
  av->util.open_children.fetch_add(1);
  return 0;
}

int ControlDgramEp(fid* object, int command, void* arg) {
  VerbsDgramEp* ep = ToVerbsDgramEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  return ControlUtilEndpoint(&ep->util, command, arg);
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  VerbsDgramEp* ep = ToVerbsDgramEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (addrlen == nullptr || (addr == nullptr && *addrlen > 0)) {
    return Fail(*ep, FI_EINVAL, "fi_getname: addr or addrlen");
  }
  if (ep->qp == nullptr) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_getname: the queue pair (and so "
                                     "the name) exists from fi_enable on");
  }
  const UdName name = MakeUdName(ep->port.gid, ep->qp->qp_num, ep->port.lid);
  const size_t room = *addrlen;
  *addrlen = sizeof(name);
  if (room < sizeof(name)) return -FI_ETOOSMALL;
  memcpy(addr, &name, sizeof(name));
  return 0;
}

int NoSetName(fid* object, void*, size_t) {
  VerbsDgramEp* ep = ToVerbsDgramEp(reinterpret_cast<fid_ep*>(object));
  return Fail(*ep, FI_ENOSYS, "fi_setname: a UD endpoint's name is its "
                              "queue pair's, which the device numbers");
}

fi_ops kDgramEpFidOps = MakeFidOps(
    {.close = CloseDgramEp, .bind = BindDgramEp, .control = ControlDgramEp});

fi_ops_cm kDgramCmOps = ConnectionlessCmOps(NoSetName, GetName);

}  // namespace

void DgramCompletions::Progress() {
  MutexLock<OptionalMutex> lock(ep_->util.mutex);
  AckNotification(ep_->api(), &ep_->device_cq);
  PollAll(ep_);
  if (ArmNotification(&ep_->device_cq, false)) PollAll(ep_);
}

int DgramCompletions::progress_fd() const {
  return ep_->device_cq.channel->fd;
}

bool DgramCompletions::auto_progress() const {
  return ep_->util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

void DgramCompletions::ArmFds() {
  MutexLock<OptionalMutex> lock(ep_->util.mutex);
  if (ArmNotification(&ep_->device_cq, true)) PollAll(ep_);
}

int OpenVerbsDgramEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                     void* context) {
  auto* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  if (info->tx_attr == nullptr || info->rx_attr == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: info needs tx_attr and "
                                 "rx_attr\n");
    return -FI_EINVAL;
  }
  if (domain->resources == nullptr ||
      domain->info->ep_attr->type != FI_EP_DGRAM) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: an FI_EP_DGRAM endpoint "
                                 "needs a domain opened for FI_EP_DGRAM\n");
    return -FI_EINVAL;
  }
  VerbsDomain* verbs = ToVerbsDomain(domain);
  absl::StatusOr<UdPort> port = FindUdPort(*verbs);
  if (!port.ok()) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: %s\n",
            std::string(port.status().message()).c_str());
    return ToFiErrno(port.status());
  }
  if (info->ep_attr->max_msg_size > MtuBytes(port->active_mtu)) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: max_msg_size %zu exceeds "
            "the port's MTU (%zu)\n", info->ep_attr->max_msg_size,
            MtuBytes(port->active_mtu));
    return -FI_EINVAL;
  }
  auto* ep = new VerbsDgramEp;
  ep->util.ep_fid = {};
  absl::Status status =
      InitUtilEndpoint(&ep->util, domain, info, context, &kDgramEpFidOps);
  if (!status.ok()) {
    delete ep;
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  ep->domain = verbs;
  ep->port = *port;
  ep->registers_buffers =
      (domain->info->domain_attr->mr_mode & FI_MR_LOCAL) == 0;
  InstallDgramDataOps(ep, &kDgramCmOps);
  *ep_out = &ep->util.ep_fid;
  return 0;
}

}  // namespace verbs
}  // namespace fabric

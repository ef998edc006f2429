#include "fabric/providers/verbs/verbs_srx.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/data_path_ops.h"
#include "fabric/providers/util/endpoint_tables.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/verbs/verbs_attr.h"
#include "fabric/providers/verbs/verbs_sges.h"

namespace fabric {
namespace verbs {
namespace {

constexpr uint64_t kRxFlags = FI_COMPLETION | FI_MORE;

int Fail(const fi_provider* log, int fi_errno, const std::string& what) {
  return LogFailure(log, FI_LOG_EP_CTRL, fi_errno, what);
}

VerbsSrx* Srx(fid_ep* ep) { return FidCast<VerbsSrx>(ep); }

ssize_t PostSharedReceive(VerbsSrx* srx, const iovec* iov, void* const* desc,
                          size_t count, void* context, uint64_t flags) {
  if ((flags & ~kRxFlags) != 0) {
    return Fail(srx->log(), FI_EBADFLAGS,
                absl::StrCat("fi_recv: unknown receive flags 0x",
                             absl::Hex(flags & ~kRxFlags)));
  }
  Sges sges;
  LocalRegistrations held;
  absl::Status ok =
      DescribeReceive(srx->domain, srx->registers_buffers, nullptr, iov, desc,
                      count, srx->iov_limit, srx->max_msg_size, &held, &sges);
  if (!ok.ok()) {
    return Fail(srx->log(), -ToFiErrno(ok), std::string(ok.message()));
  }
  MutexLock<Mutex> lock(srx->mutex);
  if (srx->free.empty()) return -FI_EAGAIN;
  Posted* posted = &srx->posted[srx->free.back()];
  srx->free.pop_back();
  // Whether it writes an entry is decided where it arrives.
  StartRequest(posted, context, FI_RECV | FI_MSG, false, kRecvCntr, &held);
  posted->request.buf = count > 0 ? iov[0].iov_base : nullptr;
  posted->flags = flags;
  ibv_recv_wr wr = {};
  wr.wr_id = reinterpret_cast<uintptr_t>(&posted->request);
  wr.sg_list = sges.data();
  wr.num_sge = static_cast<int>(sges.size());
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srx->srq, &wr, &bad); rc != 0) {
    posted->registrations.Clear();
    srx->free.push_back(posted->index);
    if (rc == ENOMEM) return -FI_EAGAIN;
    return Fail(srx->log(), FI_EIO,
                absl::StrCat("ibv_post_srq_recv: ", strerror(rc)));
  }
  return 0;
}

// The receive calls of util/data_path_ops.h end here.
struct SrxCalls {
  static ssize_t Receive(fid_ep* ep, const ReceiveCall& call) {
    return PostSharedReceive(Srx(ep), call.iov, call.desc, call.count,
                             call.context, call.flags);
  }
  static uint64_t RxFlags(fid_ep* ep) { return Srx(ep)->op_flags; }
  static const fi_provider* Log(fid_ep* ep) { return Srx(ep)->log(); }
};

int Close(fid* object) {
  VerbsSrx* srx = FidCast<VerbsSrx>(object);
  if (srx->bound.load() > 0) {
    return Fail(srx->log(), FI_EBUSY,
                "fi_close: endpoints are bound to the shared receive "
                "context");
  }
  if (srx->srq != nullptr) {
    if (int rc = srx->domain->api().destroy_srq(srx->srq); rc != 0) {
      return Fail(srx->log(), FI_EBUSY,
                  absl::StrCat("fi_close: ibv_destroy_srq: ", strerror(rc)));
    }
    srx->srq = nullptr;
  }
  srx->util_domain->open_children.fetch_sub(1);
  delete srx;  // its slots' registrations go with it
  return 0;
}

fi_ops kSrxFidOps = MakeFidOps({.close = Close});

// The receive calls; transmits are not the context's (-FI_ENOSYS).
fi_ops_msg kSrxMsgOps = ReceiveOnlyMsgOps<SrxCalls>();

}  // namespace

int OpenVerbsSrx(fid_domain* domain_fid, fi_rx_attr* attr, fid_ep** srx_out,
                 void* context) {
  auto* util_domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = util_domain->fabric->provider->c_provider();
  VerbsDomain* domain = ToVerbsDomain(util_domain);
  const ibv_device_attr& device = domain->device_attr();
  const fi_rx_attr& limits = *util_domain->info->rx_attr;
  const size_t size = attr->size != 0 ? attr->size : kDefaultQueueSize;
  const size_t iov_limit =
      attr->iov_limit != 0
          ? attr->iov_limit
          : std::min(kDefaultIovLimit,
                     static_cast<size_t>(std::max(device.max_srq_sge, 1)));
  if (device.max_srq <= 0) {
    return Fail(log, FI_ENOSYS, absl::StrCat("fi_srx_context: the device "
                                             "has no shared receive queues"));
  }
  if (size > static_cast<size_t>(std::max(device.max_srq_wr, 0)) ||
      iov_limit > static_cast<size_t>(std::max(device.max_srq_sge, 0)) ||
      iov_limit > limits.iov_limit) {
    return Fail(log, FI_EINVAL,
                absl::StrCat("fi_srx_context: size ", size, " or iov_limit ",
                             iov_limit, " beyond the device's (",
                             device.max_srq_wr, ", ", device.max_srq_sge,
                             ")"));
  }
  if ((attr->op_flags & ~kRxFlags) != 0) {
    return Fail(log, FI_EBADFLAGS,
                "fi_srx_context: op_flags other than FI_COMPLETION");
  }
  auto srx = std::make_unique<VerbsSrx>();
  srx->ep_fid = {};
  InitFid(&srx->ep_fid.fid, FI_CLASS_SRX_CTX, context, &kSrxFidOps);
  // A context has no address of its own: no cm calls.
  InstallEndpointTables(&srx->ep_fid, {.msg = &kSrxMsgOps});
  srx->util_domain = util_domain;
  srx->domain = domain;
  srx->iov_limit = iov_limit;
  srx->max_msg_size = util_domain->info->ep_attr->max_msg_size;
  srx->op_flags = attr->op_flags;
  srx->registers_buffers =
      (util_domain->info->domain_attr->mr_mode & FI_MR_LOCAL) == 0;
  ibv_srq_init_attr init = {};
  init.srq_context = srx.get();
  init.attr.max_wr = static_cast<uint32_t>(size);
  init.attr.max_sge = static_cast<uint32_t>(iov_limit);
  srx->srq = domain->api().create_srq(domain->pd(), &init);
  if (srx->srq == nullptr) {
    return Fail(log, errno == ENOMEM ? FI_ENOMEM : FI_EINVAL,
                absl::StrCat("ibv_create_srq of ", size, " entries: ",
                             strerror(errno)));
  }
  // The device may round the depth up: a slot for each entry it takes.
  // Not yet seen by any other thread: the lock only satisfies the analysis.
  MutexLock<Mutex> lock(srx->mutex);
  srx->posted.resize(init.attr.max_wr);
  for (uint32_t i = 0; i < srx->posted.size(); ++i) {
    srx->posted[i].index = i;
    srx->posted[i].transmit = false;
    srx->posted[i].srx = srx.get();
    srx->posted[i].cntr = kRecvCntr;
    srx->free.push_back(i);
  }
  util_domain->open_children.fetch_add(1);
  *srx_out = &srx.release()->ep_fid;
  return 0;
}

VerbsSrx* AsVerbsSrx(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_SRX_CTX ||
      object->ops != &kSrxFidOps) {
    return nullptr;
  }
  return FidCast<VerbsSrx>(object);
}

void ReleaseSrxSlot(VerbsSrx* srx, Posted* posted) {
  MutexLock<Mutex> lock(srx->mutex);
  if (!posted->registrations.empty()) posted->registrations.Clear();
  srx->free.push_back(posted->index);
}

}  // namespace verbs
}  // namespace fabric

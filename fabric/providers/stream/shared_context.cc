#include "fabric/providers/stream/shared_context.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <memory>
#include <mutex>

#include "fabric/api/core/status.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_calls.h"
#include "fabric/providers/util/endpoint_tables.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace stream {
namespace {

const fi_provider* Log(const UtilDomain& domain) {
  return domain.fabric->provider->c_provider();
}

int Fail(const UtilDomain& domain, int fi_errno, const char* what) {
  FI_WARN(Log(domain), FI_LOG_EP_CTRL, "%s\n", what);
  return -fi_errno;
}

int CloseSharedRx(fid* object) {
  SharedRx* srx = FidCast<SharedRx>(object);
  UtilDomain* domain = srx->queues.util.domain;
  if (srx->peer.bound_eps.load() > 0) {
    return Fail(*domain, FI_EBUSY,
                "fi_close: endpoints are still bound to the shared receive "
                "context");
  }
  ReleaseUtilEndpoint(&srx->queues.util);
  delete srx;
  return 0;
}

int CloseSharedTx(fid* object) {
  SharedTx* stx = FidCast<SharedTx>(object);
  if (stx->bound_eps.load() > 0) {
    return Fail(*stx->domain, FI_EBUSY,
                "fi_close: endpoints are still bound to the shared transmit "
                "context");
  }
  stx->domain->open_children.fetch_sub(1);
  delete stx;
  return 0;
}

fi_ops kSharedRxFidOps = MakeFidOps({.close = CloseSharedRx});
fi_ops kSharedTxFidOps = MakeFidOps({.close = CloseSharedTx});

// The receive calls of the data path; transmit calls are not the
// context's (-FI_ENOSYS).
fi_ops_msg kSharedRxMsgOps = ReceiveOnlyMsgOps<StreamCalls>();
fi_ops_tagged kSharedRxTaggedOps = ReceiveOnlyTaggedOps<StreamCalls>();

// The context's attributes: the domain's, with the receive side of `attr`.
InfoPtr SharedRxInfo(const UtilDomain& domain, const fi_rx_attr& attr) {
  InfoPtr info = DupInfo(*domain.info);
  if (info == nullptr) return nullptr;
  fi_rx_attr* rx = info->rx_attr;
  if (attr.caps != 0) rx->caps = attr.caps & info->caps;
  rx->op_flags = attr.op_flags;
  if (attr.size != 0) rx->size = attr.size;
  if (attr.iov_limit != 0) rx->iov_limit = attr.iov_limit;
  return info;
}

}  // namespace

Link* SharedRxEvents::LinkFor(fi_addr_t, int* error) {
  *error = -FI_EOPNOTSUPP;
  return nullptr;
}

int OpenSharedRx(fid_domain* domain_fid, fi_rx_attr* attr, fid_ep** srx_out,
                 void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_rx_attr& limits = *domain->info->rx_attr;
  if (attr->size > limits.size || attr->iov_limit > limits.iov_limit) {
    return Fail(*domain, FI_EINVAL,
                "fi_srx_context: size or iov_limit beyond the domain's");
  }
  if (attr->op_flags & ~(FI_COMPLETION | FI_MULTI_RECV)) {
    return Fail(*domain, FI_EBADFLAGS,
                "fi_srx_context: op_flags other than FI_COMPLETION and "
                "FI_MULTI_RECV");
  }
  InfoPtr info = SharedRxInfo(*domain, *attr);
  if (info == nullptr) return Fail(*domain, FI_ENOMEM, "fi_srx_context");
  auto srx = std::make_unique<SharedRx>();
  StreamEp& queues = srx->queues;
  queues.util.ep_fid = {};
  absl::Status status = InitUtilEndpoint(&queues.util, domain, info.get(),
                                         context, &kSharedRxFidOps);
  if (!status.ok()) {
    return LogFailure(Log(*domain), FI_LOG_EP_CTRL, status, "fi_srx_context");
  }
  queues.util.ep_fid.fid.fclass = FI_CLASS_SRX_CTX;
  // A context has no address of its own: no cm calls.
  InstallEndpointTables(&queues.util.ep_fid, {.ops = &kStreamEpOps,
                                              .msg = &kSharedRxMsgOps,
                                              .tagged = &kSharedRxTaggedOps});
  queues.owner = &srx->events;
  queues.directed_recv = (info->caps & FI_DIRECTED_RECV) != 0;
  queues.util.enabled.store(true);
  fid_peer_srx* owner = StreamEpOwnerSrx(&queues);
  owner->peer_ops = &kPeerSrxOps;
  srx->peer.ep_fid = {};
  srx->peer.domain = domain;
  srx->peer.owner = owner;
  srx->peer.msg_endpoints = true;
  *srx_out = &srx.release()->queues.util.ep_fid;
  return 0;
}

int OpenSharedTx(fid_domain* domain_fid, fi_tx_attr* attr, fid_stx** stx_out,
                 void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_tx_attr& limits = *domain->info->tx_attr;
  if (attr->size > limits.size || attr->iov_limit > limits.iov_limit) {
    return Fail(*domain, FI_EINVAL,
                "fi_stx_context: size or iov_limit beyond the domain's");
  }
  auto* stx = new SharedTx;
  stx->stx_fid = {};
  InitFid(&stx->stx_fid.fid, FI_CLASS_STX_CTX, context, &kSharedTxFidOps);
  stx->stx_fid.ops = &kNoEpOps;
  stx->domain = domain;
  stx->capacity = attr->size != 0 ? attr->size : limits.size;
  domain->open_children.fetch_add(1);
  *stx_out = &stx->stx_fid;
  return 0;
}

SharedRx* AsSharedRx(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_SRX_CTX ||
      object->ops != &kSharedRxFidOps) {
    return nullptr;
  }
  return FidCast<SharedRx>(object);
}

SharedTx* AsSharedTx(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_STX_CTX ||
      object->ops != &kSharedTxFidOps) {
    return nullptr;
  }
  return FidCast<SharedTx>(object);
}

int BindSharedTx(StreamEp* ep, SharedTx* stx, uint64_t flags) {
  const UtilDomain& domain = *ep->util.domain;
  if (flags != 0) {
    return Fail(domain, FI_EBADFLAGS, "fi_ep_bind: an STX binds with flags 0");
  }
  if (!ServesDomain(stx->domain, *ep->util.domain)) {
    return Fail(domain, FI_EINVAL, "fi_ep_bind: STX of another domain");
  }
  if (ep->shared_tx != nullptr) {
    return Fail(domain, FI_EINVAL, "fi_ep_bind: an STX is bound");
  }
  if (ep->util.enabled.load()) {
    return Fail(domain, FI_EOPBADSTATE, "fi_ep_bind: the endpoint is enabled");
  }
  ep->shared_tx = stx;
  stx->bound_eps.fetch_add(1);
  return 0;
}

bool TakeSharedTxSlot(StreamEp* ep) {
  SharedTx* stx = ep->shared_tx;
  size_t taken = stx->outstanding.load(std::memory_order_relaxed);
  do {
    if (taken >= stx->capacity) return false;
  } while (!stx->outstanding.compare_exchange_weak(
      taken, taken + 1, std::memory_order_relaxed));
  ++ep->tx_outstanding;
  return true;
}

void CountSharedTxSlot(StreamEp* ep, int delta) {
  ep->shared_tx->outstanding.fetch_add(static_cast<size_t>(delta),
                                       std::memory_order_relaxed);
}

void ReleaseSharedContexts(StreamEp* ep) {
  ReleasePeerSrx(ep);
  SharedTx* stx = ep->shared_tx;
  if (stx == nullptr) return;
  stx->outstanding.fetch_sub(ep->tx_outstanding, std::memory_order_relaxed);
  stx->bound_eps.fetch_sub(1);
  ep->shared_tx = nullptr;
}

}  // namespace stream
}  // namespace fabric

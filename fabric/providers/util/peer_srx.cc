#include "fabric/providers/util/peer_srx.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/endpoint_tables.h"
#include "fabric/providers/util/fid_ops.h"

namespace fabric {
namespace {

int ClosePeerSrx(fid* object) {
  PeerSrx* srx = FidCast<PeerSrx>(object);
  if (srx->bound_eps.load() > 0) {
    FI_WARN(srx->domain->fabric->provider->c_provider(), FI_LOG_EP_CTRL,
            "fi_close: %d endpoints are still bound to the peer SRX\n",
            srx->bound_eps.load());
    return -FI_EBUSY;
  }
  srx->domain->open_children.fetch_sub(1);
  delete srx;
  return 0;
}

fi_ops kPeerSrxFidOps = MakeFidOps({.close = ClosePeerSrx});

// The owner's fid_peer_srx named by `context`, checked.
absl::StatusOr<fid_peer_srx*> ImportedPeerSrx(const void* context) {
  const auto* peer_context = static_cast<const fi_peer_srx_context*>(context);
  if (peer_context == nullptr ||
      peer_context->size < sizeof(fi_peer_srx_context) ||
      peer_context->srx == nullptr) {
    return FiError(FI_EINVAL, "fi_srx_context: FI_PEER needs a struct "
                              "fi_peer_srx_context with the owner's "
                              "fid_peer_srx");
  }
  const fi_ops_srx_owner* ops = peer_context->srx->owner_ops;
  if (ops == nullptr || ops->size < sizeof(fi_ops_srx_owner) ||
      ops->get_msg == nullptr || ops->get_tag == nullptr ||
      ops->queue_msg == nullptr || ops->queue_tag == nullptr ||
      ops->free_entry == nullptr) {
    return FiError(FI_EINVAL, "fi_srx_context: the owner's fid_peer_srx "
                              "lacks owner_ops");
  }
  return peer_context->srx;
}

absl::StatusOr<fid_ep*> Open(UtilDomain* domain, const fi_rx_attr* attr,
                             fid_ep** srx_out, void* context) {
  if (attr == nullptr || srx_out == nullptr) {
    return FiError(FI_EINVAL, "fi_srx_context: attr and rx_ep must not be "
                              "NULL");
  }
  const Provider& provider = *domain->fabric->provider;
  fi_ops_srx_peer* peer_ops = provider.peer_srx_ops();
  if (peer_ops == nullptr) {
    return FiError(FI_EINVAL, absl::StrCat("fi_srx_context: ", provider.name(),
                                           " cannot be a peer SRX"));
  }
  absl::StatusOr<fid_peer_srx*> owner = ImportedPeerSrx(context);
  if (!owner.ok()) return owner.status();
  (*owner)->peer_ops = peer_ops;
  auto* srx = new PeerSrx;
  srx->ep_fid = {};
  InitFid(&srx->ep_fid.fid, FI_CLASS_SRX_CTX, context, &kPeerSrxFidOps);
  InstallEndpointTables(&srx->ep_fid, {});
  srx->domain = domain;
  srx->owner = *owner;
  domain->open_children.fetch_add(1);
  return &srx->ep_fid;
}

}  // namespace

int OpenSrxContext(fid_domain* domain_fid, fi_rx_attr* attr, fid_ep** srx,
                   void* context) {
  auto* domain = FidCast<UtilDomain>(domain_fid);
  const Provider& provider = *domain->fabric->provider;
  if (attr != nullptr && srx != nullptr && (attr->op_flags & FI_PEER) == 0) {
    int rc = provider.OpenSharedRxContext(domain_fid, attr, srx, context);
    if (rc == -FI_ENOSYS) {
      FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
              "fi_srx_context: %s has no shared receive contexts\n",
              provider.name());
    }
    return rc;
  }
  absl::StatusOr<fid_ep*> opened = Open(domain, attr, srx, context);
  if (!opened.ok()) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_EP_CTRL, "%s\n",
            std::string(opened.status().message()).c_str());
    return ToFiErrno(opened.status());
  }
  *srx = *opened;
  return 0;
}

PeerSrx* AsPeerSrx(fid* object) {
  if (object == nullptr || object->ops != &kPeerSrxFidOps) return nullptr;
  return FidCast<PeerSrx>(object);
}

}  // namespace fabric

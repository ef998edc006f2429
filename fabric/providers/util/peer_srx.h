// File: fabric/providers/util/peer_srx.h
//
// The peer's side of a peer SRX (fi_peer(3), "PEER SRX"): what
// fi_srx_context returns on our domains.
// - With FI_PEER in attr->op_flags, `context` is the owner's struct
//   fi_peer_srx_context. The provider must be able to take receive buffers
//   from an owner (Provider::peer_srx_ops, else -FI_EINVAL); the context
//   must be whole, with the owner's fid_peer_srx and all its owner_ops
//   (else -FI_EINVAL). The peer's callbacks are set into srx->peer_ops, and
//   the returned fid_ep (FI_CLASS_SRX_CTX) posts no receives: the owner
//   does, so its msg and tagged calls return -FI_ENOSYS. An endpoint bound
//   to it (fi_ep_bind(ep, &srx_ep->fid, 0), before fi_enable) takes every
//   receive buffer from the owner.
// - Without FI_PEER: the application's shared receive context, which the
//   provider opens (Provider::OpenSharedRxContext; -FI_ENOSYS where it has
//   none).
#ifndef FABRIC_PROVIDERS_UTIL_PEER_SRX_H_
#define FABRIC_PROVIDERS_UTIL_PEER_SRX_H_

#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>

#include <atomic>

#include "fabric/providers/util/fid_cast.h"

namespace fabric {

struct UtilDomain;

struct PeerSrx {
  fid_ep ep_fid;  // first: the application's fid_ep* is &ep_fid
  UtilDomain* domain = nullptr;
  fid_peer_srx* owner = nullptr;  // the owner's, imported
  std::atomic<int> bound_eps{0};  // close fails with -FI_EBUSY while bound
  // Connected (MSG) endpoints may bind too: an application's shared
  // receive context, whose owner is the provider's own.
  bool msg_endpoints = false;
};
FABRIC_BEGINS_WITH(PeerSrx, ep_fid);

// The fi_srx_context of our domains.
int OpenSrxContext(fid_domain* domain, fi_rx_attr* attr, fid_ep** srx,
                   void* context);

// The PeerSrx `object` is, or null when it is none.
PeerSrx* AsPeerSrx(fid* object);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PEER_SRX_H_

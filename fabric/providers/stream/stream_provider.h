// File: fabric/providers/stream/stream_provider.h
//
// The provider entry points whose answer is the stream engine's, for a
// provider whose endpoints run on it: attribute support, fi_query_atomic,
// the peer SRX, and shared receive and transmit contexts.
//
//   class ShmProvider : public stream::OnStreamEngine<Provider> { ... };
//   class TcpProvider : public stream::OnStreamEngine<IpProvider> { ... };
#ifndef FABRIC_PROVIDERS_STREAM_STREAM_PROVIDER_H_
#define FABRIC_PROVIDERS_STREAM_STREAM_PROVIDER_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "fabric/providers/provider.h"
#include "fabric/providers/stream/atomic_ops.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_attr.h"

namespace fabric {
namespace stream {

template <typename Base>
class OnStreamEngine : public Base {
 public:
  using Base::Base;

  AttrSupport SupportFor(const fi_info&) const override {
    return StreamAttrSupport();
  }

  int QueryAtomic(fid_domain*, fi_datatype datatype, fi_op op,
                  fi_atomic_attr* attr, uint64_t flags) const override {
    return stream::QueryAtomic(datatype, op, attr, flags);
  }

  fi_ops_srx_peer* peer_srx_ops() const override { return &kPeerSrxOps; }

  int OpenSharedRxContext(fid_domain* domain, fi_rx_attr* attr, fid_ep** srx,
                          void* context) const override {
    return OpenSharedRx(domain, attr, srx, context);
  }

  int OpenSharedTxContext(fid_domain* domain, fi_tx_attr* attr, fid_stx** stx,
                          void* context) const override {
    return OpenSharedTx(domain, attr, stx, context);
  }
};

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_STREAM_PROVIDER_H_

// File: fabric/providers/stream/shared_context.h
//
// Shared receive and transmit contexts (fi_endpoint(3), "Shared
// Contexts") of the endpoints on the stream engine: tcp's MSG and RDM
// endpoints, shm's RDM endpoints, and the RDM endpoints over MSG ones
// (rxm_ep.h: tcp's and verbs').
//
// fi_srx_context (without FI_PEER): one receive queue that several
// endpoints, connected or not, take their buffers from. It is a StreamEp with
// queues and no links: the application posts fi_recv, fi_trecv and their
// v/msg forms on it (FI_MULTI_RECV, FI_PEEK, FI_CLAIM and FI_DISCARD too),
// and fi_cancel. Every endpoint bound to it (fi_ep_bind(ep, &srx->fid, 0),
// before fi_enable) is its peer, as an endpoint bound to a peer SRX is
// (srx.h): a message takes the first matching receive in posting
// order, whichever endpoint it arrives on, and completes to that
// endpoint's receive CQ and counters (FI_SOURCE: the sender as that
// endpoint's AV knows it); a message no receive takes is read and held
// by its endpoint, in arrival order, until a receive posted on the
// context takes it. Receives posted on a bound endpoint itself fail with
// -FI_EOPNOTSUPP. attr->size bounds the receives posted at once
// (-FI_EAGAIN past it), attr->iov_limit their iovs.
//
// fi_stx_context: a transmit queue of attr->size entries that the
// endpoints bound to it (fi_ep_bind(ep, &stx->fid, 0), before fi_enable)
// share: a transmit finding it full fails with -FI_EAGAIN. Each endpoint
// still reports to its own CQ and counters, and its transmits keep their
// order.
//
// Closing either while an endpoint is bound fails with -FI_EBUSY.
#ifndef FABRIC_PROVIDERS_STREAM_SHARED_CONTEXT_H_
#define FABRIC_PROVIDERS_STREAM_SHARED_CONTEXT_H_

#include <rdma/fi_endpoint.h>

#include <atomic>

#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/peer_srx.h"

namespace fabric {
namespace stream {

// What a shared receive context's data path decides: it has no links.
class SharedRxEvents : public StreamEpOwner {
 public:
  Link* LinkFor(fi_addr_t dest, int* error) override;
  void LinkClosed(Link*, int) override {}
  void LinkBacklog(Link*, bool) override {}
  void ReceivePosted() override {}
};

struct SharedRx {
  StreamEp queues;  // first: the application's fid_ep* is &queues.util.ep_fid
  SharedRxEvents events;
  // What endpoints bind: its owner is queues.owner_srx.
  PeerSrx peer;
};
FABRIC_BEGINS_WITH(SharedRx, queues);

struct SharedTx {
  fid_stx stx_fid;  // first: the application's fid_stx* is this
  UtilDomain* domain = nullptr;
  size_t capacity = 0;
  std::atomic<size_t> outstanding{0};
  std::atomic<int> bound_eps{0};
};
FABRIC_BEGINS_WITH(SharedTx, stx_fid);

// fi_srx_context (without FI_PEER) and fi_stx_context on a domain of the
// providers on this data path.
int OpenSharedRx(fid_domain* domain, fi_rx_attr* attr, fid_ep** srx,
                 void* context);
int OpenSharedTx(fid_domain* domain, fi_tx_attr* attr, fid_stx** stx,
                 void* context);

// The context `object` is, or null when it is none.
SharedRx* AsSharedRx(fid* object);
SharedTx* AsSharedTx(fid* object);

// fi_ep_bind of a shared transmit context: flags 0, same domain, one, before
// fi_enable. 0 or -fi_errno (logged).
int BindSharedTx(StreamEp* ep, SharedTx* stx, uint64_t flags);

// Drops the endpoint's hold on its shared contexts (it closes): the SRX's
// held messages go back to it, the STX's slots of its transmits are freed.
void ReleaseSharedContexts(StreamEp* ep);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_SHARED_CONTEXT_H_

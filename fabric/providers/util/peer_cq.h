// File: fabric/providers/util/peer_cq.h
//
// Peer CQs (fi_peer(3), "PEER CQ"). Both roles of a UtilCq:
// - peer: a CQ opened with FI_PEER imports the owner's fid_peer_cq (the
//   context is a struct fi_peer_cq_context) and hands every completion and
//   error to the owner's write/writeerr; the owner does the locking,
//   signaling and overflow handling; reservations (CqReserve) succeed
//   unless the owner is one of ours and full (CqFull). Of its read calls only fi_cq_read(cq, NULL, 0) works: it
//   advances the peer's progress, as the owner does under manual progress;
//   the others return -FI_ENOSYS.
// - owner: every UtilCq carries a fid_peer_cq (UtilCqOwnerFid) whose
//   write/writeerr queue entries on it, for a peer provider to import.
#ifndef FABRIC_PROVIDERS_UTIL_PEER_CQ_H_
#define FABRIC_PROVIDERS_UTIL_PEER_CQ_H_

#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>

#include "absl/status/statusor.h"

namespace fabric {

struct UtilCq;

// The read calls of a CQ opened with FI_PEER.
extern fi_ops_cq kPeerCqOps;

// The owner's fid_peer_cq named by fi_cq_open's FI_PEER `context`;
// FI_EINVAL status when the context, its size, cq or owner_ops are missing.
absl::StatusOr<fid_peer_cq*> ImportedPeerCq(const void* context);

// Sets up cq->owner_fid: what a peer provider imports to write into `cq`.
void InitOwnerFid(UtilCq* cq);

// The fid_peer_cq through which a peer provider writes into `cq`; from
// then on `cq` has another producer (its direct one is not asked, cq.h).
// Only for a peer that runs inside the calls on `cq`'s domain, with its
// threading and progress (tcp's local path): CqSerialized counts on it.
fid_peer_cq* UtilCqOwnerFid(UtilCq* cq);

// The UtilCq behind an imported owner `peer`, or null when the owner is
// another library's.
UtilCq* OwnerUtilCq(const fid_peer_cq* peer);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PEER_CQ_H_

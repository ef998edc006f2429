// File: fabric/providers/util/peer_av.h
//
// The owner side of peer AVs and peer AV sets (fi_peer(3), "PEER AV", "PEER
// AV SET"): every UtilAv and UtilAvSet carries the fid a peer provider
// imports to learn about it.
// - fid_peer_av query(): the AV's current type, count (addresses it holds)
//   and flags; ep_addr(): the fi_addr_t of a local endpoint's address
//   (fi_getname) in the AV, FI_ADDR_NOTAVAIL when it is not there.
// - fid_peer_av_set members(): the set's fi_addr_t values in set order;
//   -FI_ETOOSMALL (and *count set) when the caller's array is too short.
// As a peer (fi_av_open or fi_av_set with FI_PEER) these objects are not
// offered: the IP providers need their own addresses (-FI_EINVAL).
#ifndef FABRIC_PROVIDERS_UTIL_PEER_AV_H_
#define FABRIC_PROVIDERS_UTIL_PEER_AV_H_

#include <rdma/fi_ext.h>

namespace fabric {

struct UtilAv;
struct UtilAvSet;

// Set up at open: what a peer provider imports.
void InitAvOwnerFid(UtilAv* av);
void InitAvSetOwnerFid(UtilAvSet* set);

fid_peer_av* UtilAvOwnerFid(UtilAv* av);
fid_peer_av_set* UtilAvSetOwnerFid(UtilAvSet* set);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PEER_AV_H_

// File: fabric/providers/util/peer_eq.h
//
// Peer EQs (fi_peer(3), "PEER EQ"). An EQ opened with FI_PEER imports the
// owner's fid_eq (the context is a struct fi_peer_eq_context): every event
// and error the peer's objects post goes to the owner's EQ, and the
// peer's EQ itself cannot be read (-FI_ENOSYS; its fi_eq_write forwards).
// When the owner's EQ is one of ours, events are queued on it directly;
// a foreign owner gets them through fi_eq_write, errors as a struct
// fi_eq_err_entry with kEqWriteError in the flags, the value libfabric's
// own EQs take for that (UTIL_FLAG_ERROR), so their error entries arrive
// as errors. Our EQs take such writes as error entries too.
#ifndef FABRIC_PROVIDERS_UTIL_PEER_EQ_H_
#define FABRIC_PROVIDERS_UTIL_PEER_EQ_H_

#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <stdint.h>

#include "absl/status/statusor.h"

namespace fabric {

// fi_eq_write flag: `buf` is a struct fi_eq_err_entry to queue as an error.
inline constexpr uint64_t kEqWriteError = 1ULL << 60;

// The read calls of an EQ opened with FI_PEER.
extern fi_ops_eq kPeerEqOps;

// The owner's EQ named by fi_eq_open's FI_PEER `context`; FI_EINVAL when
// the context, its size, the EQ or its write op is missing.
absl::StatusOr<fid_eq*> ImportedPeerEq(const void* context);

// Hands an event or an error to the owner's EQ.
ssize_t ForwardEvent(fid_eq* owner, uint32_t event, const void* buf,
                     size_t len);
ssize_t ForwardError(fid_eq* owner, const fi_eq_err_entry& error);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PEER_EQ_H_

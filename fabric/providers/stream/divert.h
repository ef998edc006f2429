// File: fabric/providers/stream/divert.h
//
// Transmits that another endpoint carries: an endpoint's TransmitDivert
// (tcp's local path: peers on this host through shm) names, per
// destination, the endpoint that takes the call instead. Every transmit
// entry point of the stream ops (fi_msg, fi_tagged, fi_rma, fi_atomic)
// asks it first, with its own arguments and one test while no divert is
// set: StreamCalls::Divert (stream_calls.h) for util/data_path_ops.h.
#ifndef FABRIC_PROVIDERS_STREAM_DIVERT_H_
#define FABRIC_PROVIDERS_STREAM_DIVERT_H_

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <optional>

#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {

// Calls `op` of the ops table `table` with `args` on the endpoint that
// ep's divert names for `dest`: its result, or nullopt when this endpoint
// transmits itself (no divert, none named, or the named one could not reach
// `dest`: -FI_ECONNREFUSED, no endpoint there; -FI_ENOSPC, no room for a
// connection; nothing was sent then, and the divert hears it).
template <typename Ops, typename Op, typename... Args>
std::optional<ssize_t> Diverted(fid_ep* ep, fi_addr_t dest, Ops* fid_ep::*table,
                                Op Ops::*op, Args... args) {
  TransmitDivert* divert = ToStreamEp(ep)->divert;
  if (divert == nullptr) return std::nullopt;
  fid_ep* other = divert->Via(dest);
  if (other == nullptr) return std::nullopt;
  ssize_t rc = ((other->*table)->*op)(other, args...);
  if (rc != -FI_ECONNREFUSED && rc != -FI_ENOSPC) return rc;
  divert->Refused(dest);
  return std::nullopt;
}

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_DIVERT_H_

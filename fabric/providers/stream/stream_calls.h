// File: fabric/providers/stream/stream_calls.h
//
// The data calls of stream endpoints as util/data_path_ops.h and
// util/atomic_path_ops.h build their fi_msg, fi_tagged, fi_rma and fi_atomic
// tables from: one transmit, one receive (stream_ops.cc), one atomic
// (atomic.cc), and the divert every transmit asks first (divert.h).
#ifndef FABRIC_PROVIDERS_STREAM_STREAM_CALLS_H_
#define FABRIC_PROVIDERS_STREAM_STREAM_CALLS_H_

#include <rdma/fi_endpoint.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "fabric/providers/stream/divert.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/atomic_path_ops.h"
#include "fabric/providers/util/data_path_ops.h"

namespace fabric {
namespace stream {

struct StreamCalls {
  // Checks `call` and posts it to its destination: 0, -FI_EAGAIN when no
  // room is left, or the refusal (logged).
  static ssize_t Transmit(fid_ep* ep, const TransmitCall& call);
  // Checks `call` and posts (or, with FI_PEEK / FI_CLAIM, matches) it.
  static ssize_t Receive(fid_ep* ep, const ReceiveCall& call);
  // Checks `call` against the supported operations and posts it.
  static ssize_t Atomic(fid_ep* ep, const AtomicCall& call);
  static int AtomicValid(fid_ep* ep, AtomicKind kind, fi_datatype datatype,
                         fi_op op, size_t* count);

  static uint64_t TxFlags(fid_ep* ep) {
    return ToStreamEp(ep)->util.tx_op_flags;
  }
  static uint64_t RxFlags(fid_ep* ep) {
    return ToStreamEp(ep)->util.rx_op_flags;
  }
  static const fi_provider* Log(fid_ep* ep) { return ToStreamEp(ep)->log(); }

  static constexpr bool kMayDivert = true;
  template <typename Ops, typename Op, typename... Args>
  static std::optional<ssize_t> Divert(fid_ep* ep, fi_addr_t dest,
                                       Ops* fid_ep::*table, Op Ops::*op,
                                       Args... args) {
    return Diverted(ep, dest, table, op, args...);
  }
};

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_STREAM_CALLS_H_

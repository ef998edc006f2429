// File: fabric/providers/verbs/verbs_work_requests.h
//
// The send queue's work requests of an RC endpoint, from the operations the
// application posts: the opcode, its flags, immediate data (remote CQ data)
// and the remote side of RMA and atomics, checked against what verbs can
// carry; and which atomics a device does (fi_atomicvalid), and the queue
// pair's capacities. Pure functions, tested without a device.
//
//   SendOp op;
//   op.kind = SendOp::kWrite;
//   op.remote_addr = rma.addr;
//   op.rkey = rma.key;
//   ibv_send_wr wr = {};
//   absl::Status status = BuildSendWr(op, &wr);  // then wr.sg_list, num_sge
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_WORK_REQUESTS_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_WORK_REQUESTS_H_

#include <infiniband/verbs.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <stdint.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/providers/util/atomic_path_ops.h"

namespace fabric {
namespace verbs {

// Remote CQ data travels as the 32-bit immediate data (cq_data_size).
inline constexpr size_t kCqDataSize = 4;

// An operation for the send queue, as the endpoint's call describes it.
struct SendOp {
  enum Kind { kSend, kWrite, kRead, kAtomic };
  Kind kind = kSend;
  bool with_data = false;  // FI_REMOTE_CQ_DATA: `data` as immediate data
  uint64_t data = 0;
  bool inject = false;     // the device copies the bytes at post time
  bool signaled = true;    // a completion is wanted (else: unsignaled)
  bool fence = false;      // FI_FENCE: after every earlier read and atomic
  // kWrite, kRead, kAtomic: where, and the remote region's key.
  uint64_t remote_addr = 0;
  uint64_t rkey = 0;
  // kAtomic: what, its operands (the compare value for FI_CSWAP), and
  // whether the call returns the old value (fi_fetch_atomic and
  // fi_compare_atomic; fi_atomic's old value lands in the endpoint's
  // scratch buffer).
  fi_datatype datatype = FI_UINT64;
  fi_op op = FI_SUM;
  uint64_t operand = 0;
  uint64_t compare = 0;
  bool fetch = false;
};

// Fills `wr`'s opcode, send_flags, imm_data and remote fields from `op`
// (wr_id, sg_list, num_sge and next are the caller's). FI_EINVAL for
// immediate data wider than kCqDataSize bytes or on a read or atomic, an
// inject that is not a send or write, a key wider than 32 bits, or an
// atomic on an address not 8-byte aligned; FI_EOPNOTSUPP for an atomic
// AtomicCount refuses.
absl::Status BuildSendWr(const SendOp& op, ibv_send_wr* wr);

// The flags of a successful completion of `op`: FI_SEND | FI_MSG,
// FI_RMA | FI_WRITE, FI_RMA | FI_READ, and FI_ATOMIC with FI_READ for a
// fetching atomic, FI_WRITE for another.
uint64_t CompletionFlagsOf(const SendOp& op);

// fi_atomicvalid (and the fetch and compare variants) for an RC queue pair
// whose device does atomics (`device_atomics`: ibv_device_attr.atomic_cap
// is not IBV_ATOMIC_NONE): the elements one operation takes (1: a 64-bit
// fetch-and-add or compare-and-swap), or -FI_EOPNOTSUPP. FI_SUM (fetching
// or not) and FI_ATOMIC_READ (a fetching add of 0) fetch-and-add; FI_CSWAP
// (compare calls) compare-and-swaps; on FI_INT64 and FI_UINT64 only.
// `datatype` and `op` are the application's values, unchecked (EnumValue).
int AtomicCount(int datatype, int op, AtomicKind kind, bool device_atomics);

// The capacities an RC queue pair is created with: the work requests and
// scatter-gather entries of tx_attr and rx_attr, and inline data up to
// `inject_size`. FI_EINVAL (saying which) when one exceeds the device's
// limit (`device`, and `max_inline`, which the device tells only by
// creating the queue pair; fi_getinfo offers no more than these).
absl::StatusOr<ibv_qp_cap> QpCaps(const fi_tx_attr& tx, const fi_rx_attr& rx,
                                  const ibv_device_attr& device,
                                  uint32_t max_inline);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_WORK_REQUESTS_H_

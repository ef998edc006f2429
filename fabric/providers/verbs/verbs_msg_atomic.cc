// The verbs MSG endpoint's fi_atomic calls: one element each, as the
// device's atomics take it (64-bit FI_SUM, FI_ATOMIC_READ, FI_CSWAP where
// the device has them), posted as work requests (verbs_msg_transmit.h).
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/atomic_path_ops.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_msg_transmit.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// What an ioc list names: its one entry's buffer and count (more entries
// than verbs takes count as more elements).
struct IocView {
  void* addr = nullptr;
  size_t count = 0;
};

IocView ViewOf(const IocList& list) {
  if (list.ioc == nullptr || list.count == 0) {
    return IocView{nullptr, list.count};
  }
  return IocView{list.ioc[0].addr,
                 list.count == 1 ? list.ioc[0].count : list.count};
}

// The C entry points of fi_atomic (util/atomic_path_ops.h) end here.
struct VerbsAtomicCalls {
  static ssize_t Atomic(fid_ep* ep_fid, const AtomicCall& call);
  static int AtomicValid(fid_ep* ep, AtomicKind kind, fi_datatype datatype,
                         fi_op op, size_t* count) {
    int elements =
        AtomicCount(datatype, op, kind, ToVerbsMsgEp(ep)->domain->atomics());
    if (elements < 0) return elements;
    if (count != nullptr) *count = static_cast<size_t>(elements);
    return 0;
  }
  static uint64_t TxFlags(fid_ep* ep) {
    return ToVerbsMsgEp(ep)->util.tx_op_flags;
  }
  static const fi_provider* Log(fid_ep* ep) { return ToVerbsMsgEp(ep)->log(); }
};

ssize_t VerbsAtomicCalls::Atomic(fid_ep* ep_fid, const AtomicCall& call) {
  VerbsMsgEp* ep = ToVerbsMsgEp(ep_fid);
  if ((ep->util.info->caps & FI_ATOMIC) == 0) {
    return FailDataCall(*ep, FI_EOPNOTSUPP,
                        "an atomic on an endpoint opened without FI_ATOMIC");
  }
  int elements =
      AtomicCount(call.datatype, call.op, call.kind, ep->domain->atomics());
  if (elements < 0) {
    return FailDataCall(
        *ep, FiError(-elements, absl::StrCat(call.name, ": atomic op ", call.op,
                                             " on datatype ", call.datatype,
                                             " is not supported")));
  }
  const bool fetch = call.kind != AtomicKind::kWrite;
  const bool compare = call.kind == AtomicKind::kCompare;
  const IocView operand = ViewOf(call.operands);
  const IocView compare_value = ViewOf(call.compare);
  const IocView result = ViewOf(call.result);
  if (operand.count != 1 || (fetch && result.count != 1) ||
      (compare && compare_value.count != 1)) {
    return FailDataCall(*ep, FI_EINVAL,
                        "verbs atomics take one element (and one result "
                        "and compare value)");
  }
  const bool needs_operand = call.op != FI_ATOMIC_READ;
  if ((needs_operand && operand.addr == nullptr) ||
      (compare && compare_value.addr == nullptr) ||
      (fetch && result.addr == nullptr)) {
    return FailDataCall(*ep, FI_EINVAL, "an atomic's buffer is NULL");
  }
  Transmit tx;
  tx.op.kind = SendOp::kAtomic;
  // Checked by AtomicCount.
  tx.op.datatype = static_cast<fi_datatype>(call.datatype);
  tx.op.op = static_cast<fi_op>(call.op);
  tx.op.fetch = fetch;
  if (call.rma != nullptr && call.rma_count > 0) {
    tx.op.remote_addr = call.rma[0].addr;
    tx.op.rkey = call.rma[0].key;
  }
  if (needs_operand) memcpy(&tx.op.operand, operand.addr, sizeof(uint64_t));
  if (compare) memcpy(&tx.op.compare, compare_value.addr, sizeof(uint64_t));
  tx.rma_count = call.rma_count;
  if (fetch) {
    tx.result = result.addr;
    tx.result_desc =
        call.result.desc != nullptr ? call.result.desc[0] : nullptr;
  }
  tx.context = call.context;
  tx.flags = call.flags;
  tx.inject_call = call.inject_call;
  return PostTransmit(ep, tx);
}

}  // namespace

fi_ops_atomic kVerbsAtomicOps = AtomicOps<VerbsAtomicCalls>();

}  // namespace verbs
}  // namespace fabric

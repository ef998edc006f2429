// The verbs MSG endpoint's fi_atomic calls: one element each, as the
// device's atomics take it (64-bit FI_SUM, FI_ATOMIC_READ, FI_CSWAP where
// the device has them), posted as work requests (verbs_msg_transmit.h).
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_msg_transmit.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// An atomic on one element: `operand` (none for FI_ATOMIC_READ), the
// compare value of FI_CSWAP, and where a fetching call wants the old
// value.
struct AtomicCall {
  const void* operand = nullptr;
  size_t count = 0;
  const void* compare = nullptr;
  size_t compare_count = 0;
  void* result = nullptr;
  void* result_desc = nullptr;
  size_t result_count = 0;
  uint64_t addr = 0;
  uint64_t key = 0;
  size_t rma_count = 1;
  fi_datatype datatype = FI_UINT64;
  fi_op op = FI_SUM;
  void* context = nullptr;
  uint64_t flags = 0;
  bool fetch = false;
  bool compare_call = false;
  bool inject_call = false;  // fi_inject_atomic
};

ssize_t PostAtomic(VerbsMsgEp* ep, const AtomicCall& call) {
  if ((ep->util.info->caps & FI_ATOMIC) == 0) {
    return FailDataCall(*ep, FI_EOPNOTSUPP,
                        "an atomic on an endpoint opened without FI_ATOMIC");
  }
  const AtomicKind kind = call.compare_call ? AtomicKind::kCompare
                          : call.fetch      ? AtomicKind::kFetch
                                            : AtomicKind::kWrite;
  int elements =
      AtomicCount(call.datatype, call.op, kind, ep->domain->atomics());
  if (elements < 0) {
    return FailDataCall(
        *ep, FiError(-elements, absl::StrCat("atomic op ", call.op,
                                             " on datatype ", call.datatype,
                                             " is not supported")));
  }
  if (call.count != 1 || (call.fetch && call.result_count != 1) ||
      (call.compare_call && call.compare_count != 1)) {
    return FailDataCall(*ep, FI_EINVAL,
                        "verbs atomics take one element (and one result "
                        "and compare value)");
  }
  const bool needs_operand = call.op != FI_ATOMIC_READ;
  if ((needs_operand && call.operand == nullptr) ||
      (call.compare_call && call.compare == nullptr) ||
      (call.fetch && call.result == nullptr)) {
    return FailDataCall(*ep, FI_EINVAL, "an atomic's buffer is NULL");
  }
  Transmit tx;
  tx.op.kind = SendOp::kAtomic;
  tx.op.datatype = call.datatype;
  tx.op.op = call.op;
  tx.op.fetch = call.fetch;
  tx.op.remote_addr = call.addr;
  tx.op.rkey = call.key;
  if (needs_operand) memcpy(&tx.op.operand, call.operand, sizeof(uint64_t));
  if (call.compare_call) {
    memcpy(&tx.op.compare, call.compare, sizeof(uint64_t));
  }
  tx.rma_count = call.rma_count;
  tx.result = call.result;
  tx.result_desc = call.result_desc;
  tx.context = call.context;
  tx.flags = call.flags;
  tx.inject_call = call.inject_call;
  return PostTransmit(ep, tx);
}

// The remote side and the operation of a call, with the endpoint's
// op_flags.
AtomicCall Target(fid_ep* ep, uint64_t addr, uint64_t key, fi_datatype datatype,
                  fi_op op, void* context) {
  AtomicCall call;
  call.addr = addr;
  call.key = key;
  call.datatype = datatype;
  call.op = op;
  call.context = context;
  call.flags = ToVerbsMsgEp(ep)->util.tx_op_flags;
  return call;
}

// The fields fi_msg_atomic gives every atomic message call.
AtomicCall FromMsg(const fi_msg_atomic& msg, uint64_t flags) {
  AtomicCall call;
  call.rma_count = msg.rma_iov_count;
  if (msg.rma_iov != nullptr && msg.rma_iov_count > 0) {
    call.addr = msg.rma_iov[0].addr;
    call.key = msg.rma_iov[0].key;
  }
  call.datatype = msg.datatype;
  call.op = msg.op;
  call.context = msg.context;
  call.flags = flags;
  return call;
}

// What an ioc array names: its one entry's buffer and count (more entries
// than verbs takes count as more elements).
struct IocView {
  void* addr = nullptr;
  size_t count = 0;
};

IocView ViewOf(const fi_ioc* ioc, size_t count) {
  if (ioc == nullptr || count == 0) return IocView{nullptr, count};
  return IocView{ioc[0].addr, count == 1 ? ioc[0].count : count};
}

void SetOperand(AtomicCall* call, const fi_ioc* iov, size_t count) {
  IocView view = ViewOf(iov, count);
  call->operand = view.addr;
  call->count = view.count;
}

void SetCompare(AtomicCall* call, const fi_ioc* comparev, size_t count) {
  IocView view = ViewOf(comparev, count);
  call->compare = view.addr;
  call->compare_count = view.count;
  call->compare_call = true;
  call->fetch = true;
}

void SetResult(AtomicCall* call, fi_ioc* resultv, void** result_desc,
               size_t count) {
  IocView view = ViewOf(resultv, count);
  call->result = view.addr;
  call->result_count = view.count;
  call->result_desc =
      count > 0 && result_desc != nullptr ? result_desc[0] : nullptr;
  call->fetch = true;
}

ssize_t AtomicWrite(fid_ep* ep, const void* buf, size_t count, void*, fi_addr_t,
                    uint64_t addr, uint64_t key, fi_datatype datatype, fi_op op,
                    void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  call.operand = buf;
  call.count = count;
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicWritev(fid_ep* ep, const fi_ioc* iov, void**, size_t count,
                     fi_addr_t, uint64_t addr, uint64_t key,
                     fi_datatype datatype, fi_op op, void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  SetOperand(&call, iov, count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicWritemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  if (msg == nullptr)
    return FailDataCall(*ToVerbsMsgEp(ep), FI_EINVAL, "fi_atomicmsg: msg");
  AtomicCall call = FromMsg(*msg, flags);
  SetOperand(&call, msg->msg_iov, msg->iov_count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicInject(fid_ep* ep, const void* buf, size_t count, fi_addr_t,
                     uint64_t addr, uint64_t key, fi_datatype datatype,
                     fi_op op) {
  AtomicCall call = Target(ep, addr, key, datatype, op, nullptr);
  call.operand = buf;
  call.count = count;
  call.flags = FI_INJECT;
  call.inject_call = true;
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicReadwrite(fid_ep* ep, const void* buf, size_t count, void*,
                        void* result, void* result_desc, fi_addr_t,
                        uint64_t addr, uint64_t key, fi_datatype datatype,
                        fi_op op, void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  call.operand = buf;
  call.count = count;
  fi_ioc result_ioc = {result, 1};
  SetResult(&call, &result_ioc, &result_desc, 1);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicReadwritev(fid_ep* ep, const fi_ioc* iov, void**, size_t count,
                         fi_ioc* resultv, void** result_desc,
                         size_t result_count, fi_addr_t, uint64_t addr,
                         uint64_t key, fi_datatype datatype, fi_op op,
                         void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  SetOperand(&call, iov, count);
  SetResult(&call, resultv, result_desc, result_count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicReadwritemsg(fid_ep* ep, const fi_msg_atomic* msg,
                           fi_ioc* resultv, void** result_desc,
                           size_t result_count, uint64_t flags) {
  if (msg == nullptr) {
    return FailDataCall(*ToVerbsMsgEp(ep), FI_EINVAL,
                        "fi_fetch_atomicmsg: msg");
  }
  AtomicCall call = FromMsg(*msg, flags);
  SetOperand(&call, msg->msg_iov, msg->iov_count);
  SetResult(&call, resultv, result_desc, result_count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicCompwrite(fid_ep* ep, const void* buf, size_t count, void*,
                        const void* compare, void*, void* result,
                        void* result_desc, fi_addr_t, uint64_t addr,
                        uint64_t key, fi_datatype datatype, fi_op op,
                        void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  call.operand = buf;
  call.count = count;
  fi_ioc compare_ioc = {const_cast<void*>(compare), 1};
  SetCompare(&call, &compare_ioc, 1);
  fi_ioc result_ioc = {result, 1};
  SetResult(&call, &result_ioc, &result_desc, 1);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicCompwritev(fid_ep* ep, const fi_ioc* iov, void**, size_t count,
                         const fi_ioc* comparev, void**, size_t compare_count,
                         fi_ioc* resultv, void** result_desc,
                         size_t result_count, fi_addr_t, uint64_t addr,
                         uint64_t key, fi_datatype datatype, fi_op op,
                         void* context) {
  AtomicCall call = Target(ep, addr, key, datatype, op, context);
  SetOperand(&call, iov, count);
  SetCompare(&call, comparev, compare_count);
  SetResult(&call, resultv, result_desc, result_count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

ssize_t AtomicCompwritemsg(fid_ep* ep, const fi_msg_atomic* msg,
                           const fi_ioc* comparev, void**, size_t compare_count,
                           fi_ioc* resultv, void** result_desc,
                           size_t result_count, uint64_t flags) {
  if (msg == nullptr) {
    return FailDataCall(*ToVerbsMsgEp(ep), FI_EINVAL,
                        "fi_compare_atomicmsg: msg");
  }
  AtomicCall call = FromMsg(*msg, flags);
  SetOperand(&call, msg->msg_iov, msg->iov_count);
  SetCompare(&call, comparev, compare_count);
  SetResult(&call, resultv, result_desc, result_count);
  return PostAtomic(ToVerbsMsgEp(ep), call);
}

int Valid(fid_ep* ep, fi_datatype datatype, fi_op op, AtomicKind kind,
          size_t* count) {
  int elements =
      AtomicCount(datatype, op, kind, ToVerbsMsgEp(ep)->domain->atomics());
  if (elements < 0) return elements;
  if (count != nullptr) *count = static_cast<size_t>(elements);
  return 0;
}

int WriteValid(fid_ep* ep, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(ep, datatype, op, AtomicKind::kWrite, count);
}

int ReadwriteValid(fid_ep* ep, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(ep, datatype, op, AtomicKind::kFetch, count);
}

int CompwriteValid(fid_ep* ep, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(ep, datatype, op, AtomicKind::kCompare, count);
}

}  // namespace

fi_ops_atomic kVerbsAtomicOps = {
    .size = sizeof(fi_ops_atomic),
    .write = AtomicWrite,
    .writev = AtomicWritev,
    .writemsg = AtomicWritemsg,
    .inject = AtomicInject,
    .readwrite = AtomicReadwrite,
    .readwritev = AtomicReadwritev,
    .readwritemsg = AtomicReadwritemsg,
    .compwrite = AtomicCompwrite,
    .compwritev = AtomicCompwritev,
    .compwritemsg = AtomicCompwritemsg,
    .writevalid = WriteValid,
    .readwritevalid = ReadwriteValid,
    .compwritevalid = CompwriteValid,
};

}  // namespace verbs
}  // namespace fabric

// The verbs MSG endpoint's data path: fi_msg and fi_rma calls (fi_atomic's
// are in verbs_msg_atomic.cc) become work requests of its queue pair
// (verbs_work_requests.h), each carrying a Posted slot as its wr_id until
// its completion.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_msg_one_buffer.h"
#include "fabric/providers/verbs/verbs_msg_transmit.h"
#include "fabric/providers/verbs/verbs_requests.h"
#include "fabric/providers/verbs/verbs_sges.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// The operation flags each side takes (fi_sendmsg, fi_recvmsg, ...).
// Completion of an RC send or write means the peer's device acknowledged
// it (FI_TRANSMIT_COMPLETE); that the peer application can see the data
// (FI_DELIVERY_COMPLETE) it does not say, so that flag is refused, as
// libfabric's verbs does.
constexpr uint64_t kTxFlags = FI_REMOTE_CQ_DATA | FI_INJECT | FI_COMPLETION |
                              FI_FENCE | FI_MORE | FI_INJECT_COMPLETE |
                              FI_TRANSMIT_COMPLETE;
constexpr uint64_t kRxFlags = FI_COMPLETION | FI_MORE;

size_t TotalLength(const iovec* iov, size_t count) {
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

CntrKind CntrOf(const SendOp& op) {
  switch (op.kind) {
    case SendOp::kSend:
      return kSendCntr;
    case SendOp::kWrite:
      return kWriteCntr;
    case SendOp::kRead:
      return kReadCntr;
    case SendOp::kAtomic:
      return op.fetch ? kReadCntr : kWriteCntr;
  }
  return kSendCntr;
}

// Checks what the queue pair cannot check itself; fills the local side,
// registering what needs it in `held`.
absl::Status Prepare(VerbsMsgEp* ep_ptr, Transmit* tx, Sges* sges,
                     LocalRegistrations* held) {
  const VerbsMsgEp& ep = *ep_ptr;
  const fi_info& info = *ep.util.info;
  if ((tx->flags & ~kTxFlags) != 0) {
    return FiError(FI_EBADFLAGS,
                   absl::StrCat("unknown transmit flags 0x",
                                absl::Hex(tx->flags & ~kTxFlags)));
  }
  if (tx->rma_count != 1) {
    return FiError(FI_EINVAL, absl::StrCat(tx->rma_count, " remote pieces "
                                           "(rma_iov_limit is 1)"));
  }
  SendOp& op = tx->op;
  op.with_data = (tx->flags & FI_REMOTE_CQ_DATA) != 0;
  if (op.with_data && op.kind == SendOp::kWrite &&
      ((info.mode | info.rx_attr->mode) & FI_RX_CQ_DATA) == 0) {
    return FiError(FI_EOPNOTSUPP,
                   "a write with remote CQ data consumes a receive at the "
                   "target: the application must accept the FI_RX_CQ_DATA "
                   "mode");
  }
  op.fence = (tx->flags & FI_FENCE) != 0;
  if (op.kind == SendOp::kAtomic) return absl::OkStatus();
  if (tx->iov == nullptr && tx->count > 0) {
    return FiError(FI_EINVAL, "the iov array is NULL");
  }
  const size_t total = TotalLength(tx->iov, tx->count);
  if (total > info.ep_attr->max_msg_size) {
    return FiError(FI_EMSGSIZE, absl::StrCat(total, " bytes exceed "
                                             "max_msg_size ",
                                             info.ep_attr->max_msg_size));
  }
  const bool inject = (tx->flags & FI_INJECT) != 0;
  if (inject && total > info.tx_attr->inject_size) {
    return FiError(FI_EINVAL, absl::StrCat("inject of ", total, " bytes "
                                           "(inject_size ",
                                           info.tx_attr->inject_size, ")"));
  }
  // Small sends and writes go inline: the device copies them at post time
  // and needs no registration.
  const bool can_inline =
      op.kind == SendOp::kSend || op.kind == SendOp::kWrite;
  op.inject = can_inline && (inject || (total > 0 && total <= ep.max_inline));
  sges->resize(std::min(tx->count, info.tx_attr->iov_limit));
  return DescribePieces(ep.domain, ep.registers_buffers, &ep_ptr->regions,
                        tx->iov, tx->desc, tx->count, info.tx_attr->iov_limit,
                        op.inject, op.kind == SendOp::kRead, held,
                        sges->data());
}

// The one piece an atomic's old value lands in: the application's result
// buffer, or the slot's scratch word.
absl::Status AtomicTarget(VerbsMsgEp* ep, const Transmit& tx,
                          Posted* posted, ibv_sge* sge) {
  if (!tx.op.fetch) {
    sge->addr =
        reinterpret_cast<uintptr_t>(&ep->atomic_scratch[posted->index]);
    sge->length = sizeof(uint64_t);
    sge->lkey = ep->scratch_mr->lkey;
    return absl::OkStatus();
  }
  iovec result = {tx.result, sizeof(uint64_t)};
  void* desc[1] = {tx.result_desc};
  return DescribePieces(ep->domain, ep->registers_buffers, &ep->regions,
                        &result, desc, 1, 1, false, true,
                        &posted->registrations, sge);
}

ssize_t PostReceive(VerbsMsgEp* ep, const iovec* iov, void* const* desc,
                    size_t count, void* context, uint64_t flags) {
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (!ep->util.enabled.load()) {
    return FailDataCall(*ep, FI_EOPBADSTATE, "receive before fi_enable");
  }
  if ((flags & ~kRxFlags) != 0) {
    return FailDataCall(
        *ep, FI_EBADFLAGS,
        absl::StrCat("unknown receive flags 0x", absl::Hex(flags & ~kRxFlags)));
  }
  if (ep->srx != nullptr) {
    return FailDataCall(*ep, FI_EOPNOTSUPP,
                        "fi_recv on an endpoint bound to a shared receive "
                        "context: post there");
  }
  Sges sges;
  LocalRegistrations held;
  absl::Status ok = DescribeReceive(
      ep->domain, ep->registers_buffers, &ep->regions, iov, desc, count,
      ep->util.info->rx_attr->iov_limit, ep->util.info->ep_attr->max_msg_size,
      &held, &sges);
  if (!ok.ok()) return FailDataCall(*ep, ok);
  const bool write_entry = WantsRxEntry(ep->util, flags);
  int rc = 0;
  Posted* posted = ep->slots.Acquire(false, ep->util.rx_cq, write_entry, &rc);
  if (posted == nullptr) return rc;
  StartRequest(posted, context, FI_RECV | FI_MSG, write_entry, kRecvCntr,
               &held);
  posted->request.buf = count > 0 ? iov[0].iov_base : nullptr;
  if (ep->qp == nullptr) {
    ep->early_receives.push_back(
        EarlyReceive{std::vector<ibv_sge>(sges.begin(), sges.end()), posted});
    return 0;
  }
  ibv_recv_wr wr = {};
  return PostWorkRequest(ep->qp, &wr, sges.data(), sges.size(), posted,
                         &ep->slots, ep->util.rx_cq, ep->log());
}

VerbsMsgEp* Ep(fid_ep* ep) { return ToVerbsMsgEp(ep); }

// --- fi_msg -------------------------------------------------------------

ssize_t Recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t,
             void* context) {
  ssize_t rc;
  if (TryReceiveOneBuffer(Ep(ep), buf, len, desc, context, &rc)) return rc;
  iovec iov = {buf, len};
  return PostReceive(Ep(ep), &iov, &desc, 1, context, Ep(ep)->util.rx_op_flags);
}

ssize_t Recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t, void* context) {
  return PostReceive(Ep(ep), iov, desc, count, context,
                     Ep(ep)->util.rx_op_flags);
}

ssize_t Recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (msg == nullptr) {
    return FailDataCall(*Ep(ep), FI_EINVAL, "fi_recvmsg: msg");
  }
  return PostReceive(Ep(ep), msg->msg_iov, msg->desc, msg->iov_count,
                     msg->context, flags);
}

Transmit Message(const iovec* iov, void* const* desc, size_t count,
                 void* context, uint64_t flags) {
  Transmit tx;
  tx.op.kind = SendOp::kSend;
  tx.iov = iov;
  tx.desc = desc;
  tx.count = count;
  tx.context = context;
  tx.flags = flags;
  return tx;
}

ssize_t Send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t,
             void* context) {
  ssize_t rc;
  const uint64_t flags = Ep(ep)->util.tx_op_flags;
  if (TrySendOneBuffer(Ep(ep), {buf, len, desc, context, flags}, &rc)) {
    return rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  return PostTransmit(Ep(ep), Message(&iov, &desc, 1, context, flags));
}

ssize_t Sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t, void* context) {
  return PostTransmit(Ep(ep), Message(iov, desc, count, context,
                                      Ep(ep)->util.tx_op_flags));
}

ssize_t Sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (msg == nullptr) {
    return FailDataCall(*Ep(ep), FI_EINVAL, "fi_sendmsg: msg");
  }
  Transmit tx =
      Message(msg->msg_iov, msg->desc, msg->iov_count, msg->context, flags);
  tx.op.data = msg->data;
  return PostTransmit(Ep(ep), tx);
}

ssize_t Inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t) {
  ssize_t rc;
  if (TrySendOneBuffer(Ep(ep), {buf, len, nullptr, nullptr, FI_INJECT, 0, true},
                       &rc)) {
    return rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx = Message(&iov, nullptr, 1, nullptr, FI_INJECT);
  tx.inject_call = true;
  return PostTransmit(Ep(ep), tx);
}

ssize_t Senddata(fid_ep* ep, const void* buf, size_t len, void* desc,
                 uint64_t data, fi_addr_t, void* context) {
  ssize_t rc;
  const uint64_t flags = Ep(ep)->util.tx_op_flags | FI_REMOTE_CQ_DATA;
  if (TrySendOneBuffer(Ep(ep), {buf, len, desc, context, flags, data}, &rc)) {
    return rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx = Message(&iov, &desc, 1, context, flags);
  tx.op.data = data;
  return PostTransmit(Ep(ep), tx);
}

ssize_t Injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data,
                   fi_addr_t) {
  ssize_t rc;
  const uint64_t flags = FI_INJECT | FI_REMOTE_CQ_DATA;
  if (TrySendOneBuffer(Ep(ep), {buf, len, nullptr, nullptr, flags, data, true},
                       &rc)) {
    return rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx = Message(&iov, nullptr, 1, nullptr, flags);
  tx.op.data = data;
  tx.inject_call = true;
  return PostTransmit(Ep(ep), tx);
}

// --- fi_rma -------------------------------------------------------------

Transmit Rma(SendOp::Kind kind, const iovec* iov, void* const* desc,
             size_t count, uint64_t addr, uint64_t key, void* context,
             uint64_t flags) {
  Transmit tx = Message(iov, desc, count, context, flags);
  tx.op.kind = kind;
  tx.op.remote_addr = addr;
  tx.op.rkey = key;
  return tx;
}

// fi_readmsg and fi_writemsg: the one remote piece verbs takes.
ssize_t RmaMsg(fid_ep* ep, SendOp::Kind kind, const fi_msg_rma* msg,
               uint64_t flags) {
  if (msg == nullptr || (msg->rma_iov == nullptr && msg->rma_iov_count > 0)) {
    return FailDataCall(*Ep(ep), FI_EINVAL,
                        "fi_readmsg/fi_writemsg: msg or rma_iov");
  }
  const fi_rma_iov remote =
      msg->rma_iov_count > 0 ? msg->rma_iov[0] : fi_rma_iov{};
  Transmit tx = Rma(kind, msg->msg_iov, msg->desc, msg->iov_count,
                    remote.addr, remote.key, msg->context, flags);
  tx.rma_count = msg->rma_iov_count;
  tx.op.data = msg->data;
  return PostTransmit(Ep(ep), tx);
}

ssize_t Read(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t,
             uint64_t addr, uint64_t key, void* context) {
  iovec iov = {buf, len};
  return PostTransmit(Ep(ep), Rma(SendOp::kRead, &iov, &desc, 1, addr, key,
                                  context, Ep(ep)->util.tx_op_flags));
}

ssize_t Readv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t, uint64_t addr, uint64_t key, void* context) {
  return PostTransmit(Ep(ep), Rma(SendOp::kRead, iov, desc, count, addr, key,
                                  context, Ep(ep)->util.tx_op_flags));
}

ssize_t Readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  return RmaMsg(ep, SendOp::kRead, msg, flags);
}

ssize_t Write(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t,
              uint64_t addr, uint64_t key, void* context) {
  iovec iov = {const_cast<void*>(buf), len};
  return PostTransmit(Ep(ep), Rma(SendOp::kWrite, &iov, &desc, 1, addr, key,
                                  context, Ep(ep)->util.tx_op_flags));
}

ssize_t Writev(fid_ep* ep, const iovec* iov, void** desc, size_t count,
               fi_addr_t, uint64_t addr, uint64_t key, void* context) {
  return PostTransmit(Ep(ep), Rma(SendOp::kWrite, iov, desc, count, addr, key,
                                  context, Ep(ep)->util.tx_op_flags));
}

ssize_t Writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  return RmaMsg(ep, SendOp::kWrite, msg, flags);
}

ssize_t InjectWrite(fid_ep* ep, const void* buf, size_t len, fi_addr_t,
                    uint64_t addr, uint64_t key) {
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx =
      Rma(SendOp::kWrite, &iov, nullptr, 1, addr, key, nullptr, FI_INJECT);
  tx.inject_call = true;
  return PostTransmit(Ep(ep), tx);
}

ssize_t Writedata(fid_ep* ep, const void* buf, size_t len, void* desc,
                  uint64_t data, fi_addr_t, uint64_t addr, uint64_t key,
                  void* context) {
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx = Rma(SendOp::kWrite, &iov, &desc, 1, addr, key, context,
                    Ep(ep)->util.tx_op_flags | FI_REMOTE_CQ_DATA);
  tx.op.data = data;
  return PostTransmit(Ep(ep), tx);
}

ssize_t InjectWritedata(fid_ep* ep, const void* buf, size_t len,
                        uint64_t data, fi_addr_t, uint64_t addr,
                        uint64_t key) {
  iovec iov = {const_cast<void*>(buf), len};
  Transmit tx = Rma(SendOp::kWrite, &iov, nullptr, 1, addr, key, nullptr,
                    FI_INJECT | FI_REMOTE_CQ_DATA);
  tx.op.data = data;
  tx.inject_call = true;
  return PostTransmit(Ep(ep), tx);
}

// --- fi_ops_ep ----------------------------------------------------------

int GetOpt(fid* object, int level, int name, void* value, size_t* len) {
  auto* ep = FidCast<VerbsMsgEp>(object);
  return GetOptUtilEndpoint(&ep->util, level, name, value, len, kCmDataSize);
}

int SetOpt(fid* object, int level, int name, const void* value, size_t len) {
  auto* ep = FidCast<VerbsMsgEp>(object);
  return SetOptUtilEndpoint(&ep->util, level, name, value, len);
}

fi_ops_ep kVerbsEpOps = {
    .size = sizeof(fi_ops_ep),
    .cancel = FABRIC_NO_OP(fi_ops_ep, cancel),
    .getopt = GetOpt,
    .setopt = SetOpt,
    .tx_ctx = NoTxCtx,
    .rx_ctx = NoRxCtx,
    .rx_size_left = NoSizeLeft,
    .tx_size_left = NoSizeLeft,
};

fi_ops_msg kVerbsMsgOps = {
    .size = sizeof(fi_ops_msg),
    .recv = Recv,
    .recvv = Recvv,
    .recvmsg = Recvmsg,
    .send = Send,
    .sendv = Sendv,
    .sendmsg = Sendmsg,
    .inject = Inject,
    .senddata = Senddata,
    .injectdata = Injectdata,
};

fi_ops_rma kVerbsRmaOps = {
    .size = sizeof(fi_ops_rma),
    .read = Read,
    .readv = Readv,
    .readmsg = Readmsg,
    .write = Write,
    .writev = Writev,
    .writemsg = Writemsg,
    .inject = InjectWrite,
    .writedata = Writedata,
    .injectdata = InjectWritedata,
};

}  // namespace

ssize_t FailDataCall(const VerbsMsgEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_DATA, status);
}

ssize_t FailDataCall(const VerbsMsgEp& ep, int fi_errno,
                     const std::string& what) {
  return FailDataCall(ep, FiError(fi_errno, what));
}

ssize_t PostTransmit(VerbsMsgEp* ep, Transmit tx) {
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (!ep->state.CanTransmit()) {
    return FailDataCall(*ep, FI_ENOTCONN,
                        "transmit on an endpoint that is not connected");
  }
  Sges sges;
  LocalRegistrations held;
  if (absl::Status ok = Prepare(ep, &tx, &sges, &held); !ok.ok()) {
    return FailDataCall(*ep, ok);
  }
  ibv_send_wr wr = {};
  if (absl::Status ok = BuildSendWr(tx.op, &wr); !ok.ok()) {
    return FailDataCall(*ep, ok);
  }
  const bool write_entry = !tx.inject_call && WantsTxEntry(ep->util, tx.flags);
  int rc = 0;
  Posted* posted = ep->slots.Acquire(true, ep->util.tx_cq, write_entry, &rc);
  if (posted == nullptr) return rc;
  StartRequest(posted, tx.context, CompletionFlagsOf(tx.op), write_entry,
               CntrOf(tx.op), &held);
  if (tx.op.kind == SendOp::kAtomic) {
    sges.resize(1);
    absl::Status ok = AtomicTarget(ep, tx, posted, sges.data());
    if (!ok.ok()) {
      ep->slots.Abandon(posted, ep->util.tx_cq);
      return FailDataCall(*ep, ok);
    }
  }
  return PostWorkRequest(ep->qp, &wr, sges.data(), sges.size(), posted,
                         &ep->slots, ep->util.tx_cq, ep->log());
}

void InstallVerbsDataOps(VerbsMsgEp* ep) {
  fid_ep& ep_fid = ep->util.ep_fid;
  ep_fid.ops = &kVerbsEpOps;
  ep_fid.msg = &kVerbsMsgOps;
  ep_fid.tagged = &kNoTaggedOps;
  ep_fid.rma = &kVerbsRmaOps;
  ep_fid.atomic = &kVerbsAtomicOps;
  ep_fid.collective = &kNoCollectiveOps;
}

int PostEarlyReceives(VerbsMsgEp* ep) {
  while (!ep->early_receives.empty()) {
    EarlyReceive& early = ep->early_receives.front();
    ibv_recv_wr wr = {};
    wr.wr_id = reinterpret_cast<uintptr_t>(&early.posted->request);
    wr.sg_list = early.sges.data();
    wr.num_sge = static_cast<int>(early.sges.size());
    ibv_recv_wr* bad = nullptr;
    if (int rc = ibv_post_recv(ep->qp, &wr, &bad); rc != 0) return -rc;
    ep->early_receives.erase(ep->early_receives.begin());
  }
  return 0;
}

}  // namespace verbs
}  // namespace fabric

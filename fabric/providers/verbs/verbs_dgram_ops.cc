// The verbs datagram endpoint's data path: fi_msg calls become UD work
// requests of its queue pair, each carrying a Posted slot as its wr_id
// until its completion.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/data_path_ops.h"
#include "fabric/providers/util/endpoint_tables.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/verbs/verbs_dgram_ep.h"
#include "fabric/providers/verbs/verbs_sges.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// A datagram's completion says only that the device sent it
// (FI_INJECT_COMPLETE and FI_TRANSMIT_COMPLETE are as good as it gets);
// FI_DELIVERY_COMPLETE is refused.
constexpr uint64_t kTxFlags = FI_REMOTE_CQ_DATA | FI_INJECT | FI_COMPLETION |
                              FI_MORE | FI_INJECT_COMPLETE |
                              FI_TRANSMIT_COMPLETE;
constexpr uint64_t kRxFlags = FI_COMPLETION | FI_MORE;

ssize_t Fail(const VerbsDgramEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_DATA, status);
}

ssize_t Fail(const VerbsDgramEp& ep, int fi_errno, const std::string& what) {
  return Fail(ep, FiError(fi_errno, what));
}

// Where a send to `fi_addr` goes: the last one looked up while no entry
// has left the AV, else the AV's.
absl::StatusOr<UdDestination> DestinationOf(VerbsDgramEp* ep,
                                            fi_addr_t fi_addr) {
  const uint64_t drops =
      ep->av->util.drops.load(std::memory_order_acquire);
  if (fi_addr == ep->last_addr && drops == ep->last_drops &&
      ep->last_destination.ah != nullptr) {
    return ep->last_destination;
  }
  absl::StatusOr<UdDestination> found = UdDestinationOf(ep->av, fi_addr);
  if (!found.ok()) return found.status();
  ep->last_addr = fi_addr;
  ep->last_drops = drops;
  ep->last_destination = *found;
  return found;
}

// Checks the send and fills its work request's opcode, peer and pieces.
absl::Status Prepare(VerbsDgramEp* ep, const TransmitCall& tx, Sges* sges,
                     LocalRegistrations* held, ibv_send_wr* wr) {
  const fi_info& info = *ep->util.info;
  if ((tx.flags & ~kTxFlags) != 0) {
    return FiError(FI_EBADFLAGS,
                   absl::StrCat("unknown transmit flags 0x",
                                absl::Hex(tx.flags & ~kTxFlags)));
  }
  if (tx.iov == nullptr && tx.count > 0) {
    return FiError(FI_EINVAL, "the iov array is NULL");
  }
  const size_t total = TotalLength(tx.iov, tx.count);
  const size_t max_msg_size =
      std::min<size_t>(info.ep_attr->max_msg_size, ep->overflow.size());
  if (total > max_msg_size) {
    return FiError(FI_EMSGSIZE, absl::StrCat(total, " bytes exceed "
                                             "max_msg_size ", max_msg_size,
                                             " (at most the port's MTU)"));
  }
  const bool inject = (tx.flags & FI_INJECT) != 0;
  if (inject && total > info.tx_attr->inject_size) {
    return FiError(FI_EINVAL, absl::StrCat("inject of ", total, " bytes "
                                           "(inject_size ",
                                           info.tx_attr->inject_size, ")"));
  }
  absl::StatusOr<UdDestination> destination = DestinationOf(ep, tx.dest);
  if (!destination.ok()) return destination.status();
  SendOp op;
  op.kind = SendOp::kSend;
  op.with_data = (tx.flags & FI_REMOTE_CQ_DATA) != 0;
  op.data = tx.data;
  op.inject = inject || (total > 0 && total <= ep->max_inline);
  FABRIC_RETURN_IF_ERROR(BuildSendWr(op, wr));
  wr->wr.ud.ah = destination->ah;
  wr->wr.ud.remote_qpn = destination->qpn;
  wr->wr.ud.remote_qkey = destination->qkey;
  sges->resize(std::min(tx.count, info.tx_attr->iov_limit));
  return DescribePieces(ep->domain, ep->registers_buffers, &ep->regions,
                        tx.iov, tx.desc, tx.count, info.tx_attr->iov_limit,
                        op.inject, false, held, sges->data());
}

ssize_t PostSend(VerbsDgramEp* ep, const TransmitCall& tx) {
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (!ep->util.enabled.load()) {
    return Fail(*ep, FI_EOPBADSTATE, "send before fi_enable");
  }
  Sges sges;
  LocalRegistrations held;
  ibv_send_wr wr = {};
  if (absl::Status ok = Prepare(ep, tx, &sges, &held, &wr); !ok.ok()) {
    return Fail(*ep, ok);
  }
  const bool write_entry = !tx.inject_call && WantsTxEntry(ep->util, tx.flags);
  int rc = 0;
  Posted* posted = ep->slots.Acquire(true, ep->util.tx_cq, write_entry, &rc);
  if (posted == nullptr) return rc;
  StartRequest(posted, tx.context, FI_SEND | FI_MSG, write_entry, kSendCntr,
               &held);
  return PostWorkRequest(ep->qp, &wr, sges.data(), sges.size(), posted,
                         &ep->slots, ep->util.tx_cq, ep->log());
}

ssize_t PostReceive(VerbsDgramEp* ep, const iovec* iov, void* const* desc,
                    size_t count, void* context, uint64_t flags) {
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (!ep->util.enabled.load()) {
    return Fail(*ep, FI_EOPBADSTATE, "receive before fi_enable");
  }
  if ((flags & ~kRxFlags) != 0) {
    return Fail(*ep, FI_EBADFLAGS,
                absl::StrCat("unknown receive flags 0x",
                             absl::Hex(flags & ~kRxFlags)));
  }
  Sges sges;
  LocalRegistrations held;
  absl::Status ok = DescribeReceive(
      ep->domain, ep->registers_buffers, &ep->regions, iov, desc, count,
      ep->util.info->rx_attr->iov_limit, ep->util.info->ep_attr->max_msg_size,
      &held, &sges);
  if (!ok.ok()) return Fail(*ep, ok);
  const bool write_entry = WantsRxEntry(ep->util, flags);
  int rc = 0;
  Posted* posted = ep->slots.Acquire(false, ep->util.rx_cq, write_entry, &rc);
  if (posted == nullptr) return rc;
  StartRequest(posted, context, FI_RECV | FI_MSG, write_entry, kRecvCntr,
               &held);
  posted->request.buf = count > 0 ? iov[0].iov_base : nullptr;
  // The device's 40 bytes go to the slot's own buffer, first; what does
  // not fit the application's pieces, to the overflow buffer, last.
  const size_t rx_index = posted->index - ep->slots.tx_slots();
  size_t room = 0;
  for (const ibv_sge& sge : sges) room += sge.length;
  ep->room[rx_index] = room;
  // RoCE v2 over IPv4 leaves the first 20 bytes alone: zeroed, a GRH from
  // an earlier datagram is not taken for this one's (SenderGid).
  memset(ep->grh[rx_index].data(), 0, kGrhSize / 2);
  ibv_sge grh = {};
  grh.addr = reinterpret_cast<uintptr_t>(ep->grh[rx_index].data());
  grh.length = kGrhSize;
  grh.lkey = ep->grh_mr->lkey;
  sges.insert(sges.begin(), grh);
  if (room < ep->overflow.size()) {
    ibv_sge overflow = {};
    overflow.addr = reinterpret_cast<uintptr_t>(ep->overflow.data());
    overflow.length = static_cast<uint32_t>(ep->overflow.size() - room);
    overflow.lkey = ep->overflow_mr->lkey;
    sges.push_back(overflow);
  }
  ibv_recv_wr wr = {};
  return PostWorkRequest(ep->qp, &wr, sges.data(), sges.size(), posted,
                         &ep->slots, ep->util.rx_cq, ep->log());
}

// The C entry points of fi_msg (util/data_path_ops.h) end here.
struct DgramCalls {
  static ssize_t Receive(fid_ep* ep, const ReceiveCall& call) {
    return PostReceive(ToVerbsDgramEp(ep), call.iov, call.desc, call.count,
                       call.context, call.flags);
  }
  static ssize_t Transmit(fid_ep* ep, const TransmitCall& call) {
    return PostSend(ToVerbsDgramEp(ep), call);
  }
  static uint64_t TxFlags(fid_ep* ep) {
    return ToVerbsDgramEp(ep)->util.tx_op_flags;
  }
  static uint64_t RxFlags(fid_ep* ep) {
    return ToVerbsDgramEp(ep)->util.rx_op_flags;
  }
  static const fi_provider* Log(fid_ep* ep) {
    return ToVerbsDgramEp(ep)->log();
  }
};

fi_ops_ep kDgramEpOps = UtilEndpointOps(FABRIC_NO_OP(fi_ops_ep, cancel));
fi_ops_msg kDgramMsgOps = MsgOps<DgramCalls>();

}  // namespace

void InstallDgramDataOps(VerbsDgramEp* ep, fi_ops_cm* cm) {
  InstallEndpointTables(&ep->util.ep_fid,
                        {.ops = &kDgramEpOps, .cm = cm, .msg = &kDgramMsgOps});
}

}  // namespace verbs
}  // namespace fabric

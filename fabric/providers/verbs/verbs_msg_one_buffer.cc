#include "fabric/providers/verbs/verbs_msg_one_buffer.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>

#include <algorithm>
#include <mutex>

#include "absl/base/attributes.h"
#include "fabric/providers/verbs/verbs_posted.h"
#include "fabric/providers/verbs/verbs_requests.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {
namespace {

// The transmit flags this path takes; FI_FENCE and unknown flags go the
// general way.
constexpr uint64_t kCommonTxFlags = FI_COMPLETION | FI_INJECT | FI_MORE |
                                    FI_INJECT_COMPLETE |
                                    FI_TRANSMIT_COMPLETE | FI_REMOTE_CQ_DATA;
constexpr uint64_t kCommonRxFlags = FI_COMPLETION | FI_MORE;

// The lkey of a buffer given with `desc`, when `desc` is a live region of
// this endpoint's kind; false when the general path must look (no
// descriptor: it registers the buffer, or refuses it under FI_MR_LOCAL).
// Always inline: both paths of every message take it.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool KeyOf(VerbsMsgEp* ep, void* desc,
                                               uint32_t* lkey)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  if (desc == nullptr || !ep->regions.IsLive(desc)) return false;
  *lkey = static_cast<const RegionDesc*>(desc)->lkey;
  return true;
}

}  // namespace

bool TrySendOneBuffer(VerbsMsgEp* ep, const OneBufferSend& send,
                      ssize_t* rc) {
  const fi_info& info = *ep->util.info;
  const bool with_data = (send.flags & FI_REMOTE_CQ_DATA) != 0;
  if ((send.flags & ~kCommonTxFlags) != 0 || send.len == 0 ||
      send.buf == nullptr || send.len > info.ep_attr->max_msg_size ||
      (with_data && send.data >> (8 * kCqDataSize) != 0)) {
    return false;
  }
  const bool inject = (send.flags & FI_INJECT) != 0;
  if (inject && send.len > info.tx_attr->inject_size) return false;
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (!ep->state.CanTransmit()) return false;
  ibv_sge sge;
  sge.addr = reinterpret_cast<uintptr_t>(send.buf);
  sge.length = static_cast<uint32_t>(send.len);
  sge.lkey = 0;
  // Small sends go inline: the device copies them at post time.
  const bool inline_data = inject || send.len <= ep->max_inline;
  if (!inline_data &&
      (send.len > UINT32_MAX || !KeyOf(ep, send.desc, &sge.lkey))) {
    return false;
  }
  // A send reads no remote fields: only these are set (zeroing the whole
  // request is a measurable part of this path).
  ibv_send_wr wr;
  wr.next = nullptr;
  wr.opcode = with_data ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
  wr.send_flags = inline_data ? IBV_SEND_INLINE : 0;
  wr.imm_data = 0;
  // An fi_inject reports nothing on success: unless a counter counts it,
  // it goes unsignaled where the queue allows.
  Posted* posted = nullptr;
  if (send.inject_call && ep->util.cntrs[kSendCntr] == nullptr) {
    posted = ep->slots.TakeUnsignaled();
  }
  if (posted == nullptr) {
    const bool write_entry =
        !send.inject_call && WantsTxEntry(ep->util, send.flags);
    int acquired = 0;
    posted = ep->slots.Acquire(true, ep->util.tx_cq, write_entry, &acquired);
    if (posted == nullptr) {
      *rc = acquired;
      return true;
    }
    StartRequest(posted, send.context, FI_SEND | FI_MSG, write_entry,
                 kSendCntr, nullptr);
    wr.send_flags |= IBV_SEND_SIGNALED;
  }
  // Immediate data goes in network order (ibv_post_send(3)).
  if (with_data) wr.imm_data = htonl(static_cast<uint32_t>(send.data));
  *rc = PostWorkRequest(ep->qp, &wr, &sge, 1, posted, &ep->slots,
                        ep->util.tx_cq, ep->log());
  return true;
}

bool TryReceiveOneBuffer(VerbsMsgEp* ep, void* buf, size_t len, void* desc,
                         void* context, ssize_t* rc) {
  const fi_info& info = *ep->util.info;
  const uint64_t flags = ep->util.rx_op_flags;
  if ((flags & ~kCommonRxFlags) != 0 || buf == nullptr || len == 0 ||
      info.rx_attr->iov_limit == 0) {
    return false;
  }
  // No message is longer than max_msg_size: a larger buffer is taken as
  // that much.
  len = std::min<size_t>(len, info.ep_attr->max_msg_size);
  if (len > UINT32_MAX) return false;
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  // Before the queue pair exists, and on a shared receive context, the
  // general path keeps or refuses the receive.
  ibv_sge sge;
  if (ep->qp == nullptr || ep->srx != nullptr || !ep->util.enabled.load() ||
      !KeyOf(ep, desc, &sge.lkey)) {
    return false;
  }
  sge.addr = reinterpret_cast<uintptr_t>(buf);
  sge.length = static_cast<uint32_t>(len);
  const bool write_entry = WantsRxEntry(ep->util, flags);
  int acquired = 0;
  Posted* posted =
      ep->slots.Acquire(false, ep->util.rx_cq, write_entry, &acquired);
  if (posted == nullptr) {
    *rc = acquired;
    return true;
  }
  StartRequest(posted, context, FI_RECV | FI_MSG, write_entry, kRecvCntr,
               nullptr);
  posted->request.buf = buf;
  ibv_recv_wr wr = {};
  *rc = PostWorkRequest(ep->qp, &wr, &sge, 1, posted, &ep->slots,
                        ep->util.rx_cq, ep->log());
  return true;
}

}  // namespace verbs
}  // namespace fabric

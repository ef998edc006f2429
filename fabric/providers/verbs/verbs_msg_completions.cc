// The verbs MSG endpoint's completions: its device CQ read by the domain's
// progress engine (VerbsCompletions::Progress) into the util CQs, or
// straight into the reader's buffer while the endpoint is a CQ's only
// producer (VerbsCompletions::ReadDirect, util/cq.h).
#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>

#include <mutex>

#include "fabric/providers/util/cntr.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_srx.h"

namespace fabric {
namespace verbs {
namespace {

// Passes of the data path that find no completion while transmits are out
// before it reads the connection's events (CountPass).
constexpr uint32_t kCmCheckInterval = 256;

// Takes one completion off the CQ and reports it.
void Complete(VerbsMsgEp* ep, const ibv_wc& wc) {
  auto* posted = reinterpret_cast<Posted*>(wc.wr_id);
  if (posted->srx != nullptr) {
    // A receive of the shared context: the endpoint it arrived on decides
    // whether it writes an entry. No CQ room was reserved for it (the
    // endpoint was not known); a full CQ takes it past its size (util/cq.h).
    posted->request.write_entry = WantsRxEntry(ep->util, posted->flags);
  }
  fi_cq_tagged_entry entry = {};
  if (wc.status == IBV_WC_SUCCESS) entry = CompletionOf(wc, posted->request);
  ReportWorkCompletion(&ep->util, ep->api(), ep->log(), wc, *posted, entry,
                       FI_ADDR_NOTAVAIL);
  ReleaseSlot(ep, posted);
}

// Reports every completion the CQ holds; returns how many.
size_t PollAll(VerbsMsgEp* ep) {
  return PollCq(ep->device_cq.cq, ep->log(),
                [ep](const ibv_wc& wc) { Complete(ep, wc); });
}

// Counts a pass of the data path (a progress pass or a direct read) that
// found `completed` completions. Transmits that wait without completing
// may wait on a peer that is gone: its disconnect (on the connection's
// channel, which the fabric's engine reads only when the application reads
// the EQ) moves the queue pair to the error state and flushes them, where
// the transport's retries would take (retry_cnt + 1) ACK timeouts, 17 s on
// RoCE. So the connection's events are read here too, every
// kCmCheckInterval idle passes: the system call it costs is not paid on a
// busy path.
void CountPass(VerbsMsgEp* ep, size_t completed)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex) {
  if (completed > 0) {
    ep->idle_passes = 0;
    return;
  }
  if (ep->slots.transmits_out() > 0 &&
      ++ep->idle_passes >= kCmCheckInterval) {
    ep->idle_passes = 0;
    ReadCmEventsLocked(ep);
  }
}

}  // namespace

void VerbsCompletions::Progress() {
  MutexLock<OptionalMutex> lock(ep_->util.mutex);
  AckNotification(ep_->api(), &ep_->device_cq);
  CountPass(ep_, PollAll(ep_));
  if (ArmNotification(&ep_->device_cq, false)) PollAll(ep_);
}

int VerbsCompletions::progress_fd() const {
  return ep_->device_cq.channel->fd;
}

bool VerbsCompletions::auto_progress() const {
  return ep_->util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

void VerbsCompletions::ArmFds() {
  MutexLock<OptionalMutex> lock(ep_->util.mutex);
  // Completions that came before the request will not signal: reported
  // now, else nothing would wake for them.
  if (ArmNotification(&ep_->device_cq, true)) PollAll(ep_);
}

size_t VerbsCompletions::ReadDirect(UtilCq* cq, void* buf, size_t count,
                                    fi_addr_t* sources) {
  VerbsMsgEp* ep = ep_;
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  // Entries a progress pass queued meanwhile are older: they go first.
  // (Those another thread's pass hands its own fi_cq_read are that
  // reader's: concurrent readers share no order.)
  if (cq->size.load(std::memory_order_acquire) != 0) return 0;
  // A batch whatever `count`: what is not for `cq` (a transmit's
  // completion that writes no entry) must not end the read empty-handed.
  ibv_wc wc[kPollBatch];
  const int n = ibv_poll_cq(ep->device_cq.cq, kPollBatch, wc);
  if (n < 0) {
    FI_WARN(ep->log(), FI_LOG_CQ, "ibv_poll_cq failed (%d)\n", n);
    return 0;
  }
  size_t written = 0;
  // One for `cq` went to its queue (an error, or beyond `count`): the
  // rest follow it there.
  bool queued = false;
  for (int i = 0; i < n; ++i) {
    auto* posted = reinterpret_cast<Posted*>(wc[i].wr_id);
    const UtilCq* target = posted->transmit ? ep->util.tx_cq : ep->util.rx_cq;
    if (queued || written == count || target != cq ||
        wc[i].status != IBV_WC_SUCCESS ||
        posted->srx != nullptr || !posted->request.write_entry) {
      // Whether it may write into `cq` (a shared receive's entry is decided
      // by Complete): asked before the slot goes back.
      const bool may_write = wc[i].status != IBV_WC_SUCCESS ||
                             posted->srx != nullptr ||
                             posted->request.write_entry;
      Complete(ep, wc[i]);
      queued = queued || (target == cq && may_write);
      continue;
    }
    const fi_cq_tagged_entry entry = CompletionOf(wc[i], posted->request);
    CqStoreEntry(*cq, entry, buf, written);
    if (sources != nullptr) sources[written] = FI_ADDR_NOTAVAIL;
    ++written;
    if (posted->reserved) CqUnreserve(cq);
    const CntrKind cntr = SuccessCntr(entry, *posted);
    if (ep->util.cntrs[cntr] != nullptr) CntrAdd(ep->util.cntrs[cntr], 1);
    ep->slots.Release(posted);
  }
  // A read that found nothing counts as an idle pass: fi_cq_read runs the
  // progress pass only now and then while direct reads find nothing
  // (util/cq.h), and the connection's events must still be read.
  CountPass(ep, static_cast<size_t>(n));
  return written;
}

void ReleaseSlot(VerbsMsgEp* ep, Posted* posted) {
  if (posted->srx != nullptr) return ReleaseSrxSlot(posted->srx, posted);
  ep->slots.Release(posted);
}

}  // namespace verbs
}  // namespace fabric

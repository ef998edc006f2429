// File: fabric/providers/verbs/verbs_posted.h
//
// A posted work request of a verbs endpoint (MSG or datagram), from posting
// to its completion: the slot its wr_id points at, the table of slots an
// endpoint keeps (one per send and receive queue entry, so a queue never
// takes more than it has room for), and how a work completion is reported
// to the endpoint's util CQs and counters.
//
//   Posted* posted = slots.Acquire(true, util.tx_cq, write_entry, &rc);
//   if (posted == nullptr) return rc;  // -FI_EAGAIN: the queue is full
//   StartRequest(posted, context, FI_SEND | FI_MSG, write_entry, kSendCntr,
//                &held);
//   wr.wr_id = reinterpret_cast<uintptr_t>(&posted->request);
//   ...                               // ibv_poll_cq gives it back:
//   ReportWorkCompletion(&ep->util, api, log, wc, *posted, entry, source);
//   slots.Release(posted);
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_POSTED_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_POSTED_H_

#include <infiniband/verbs.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/verbs/verbs_api.h"
#include "fabric/providers/verbs/verbs_completion.h"
#include "fabric/providers/verbs/verbs_domain.h"

namespace fabric {
namespace verbs {

struct VerbsSrx;

// A posted work request: what the entry reports (WorkRequest is the wr_id)
// and where.
struct Posted {
  WorkRequest request;  // first: wr_id points at it
  bool transmit = true;    // the transmit CQ, else the receive CQ
  bool reserved = false;   // a CQ slot was promised (CqReserve)
  CntrKind cntr = kSendCntr;
  uint32_t index = 0;      // in its WorkSlots (or VerbsSrx::posted)
  // A send: the unsignaled sends before it that its completion frees
  // (WorkSlots::TakeUnsignaled).
  uint32_t covers = 0;
  LocalRegistrations registrations;  // buffers given without descriptors
  // A receive of a shared receive context: its slot is the context's, and
  // its entry is written (or not) by the flags it was posted with.
  VerbsSrx* srx = nullptr;
  uint64_t flags = 0;
};

// Fills a slot just taken for a request: its context, the flags of its
// entry, whether it writes one (a CQ slot was then reserved), its counter,
// and the registrations it holds until it completes (taken from `held`,
// when there are any).
// Inline, as the slot calls below: they are on every message's path.
inline void StartRequest(Posted* posted, void* context, uint64_t flags,
                         bool write_entry, CntrKind cntr,
                         LocalRegistrations* held) {
  posted->request = WorkRequest();
  posted->request.context = context;
  posted->request.flags = flags;
  posted->request.write_entry = write_entry;
  posted->reserved = write_entry;
  posted->cntr = cntr;
  if (held != nullptr && !held->empty()) {
    posted->registrations = std::move(*held);
  }
}

// An endpoint's slots: the first tx_slots for its send queue, the rest for
// its receive queue, each with a free list.
class WorkSlots {
 public:
  // Makes the slots once (a retried fi_enable keeps them).
  void Init(size_t tx, size_t rx);
  bool empty() const { return posted_.empty(); }
  size_t tx_slots() const { return tx_slots_; }
  // A free slot of the send (`transmit`) or receive queue for a request,
  // with room reserved in `cq` (CqReserve) when it writes an entry: null,
  // with *rc -FI_EAGAIN, when the queue or the CQ is full.
  Posted* Acquire(bool transmit, UtilCq* cq, bool write_entry, int* rc) {
    std::vector<uint32_t>& free = transmit ? free_tx_ : free_rx_;
    // Unsignaled sends hold send queue entries too.
    if (free.size() <= (transmit ? unsignaled_out_ : 0)) {
      *rc = -FI_EAGAIN;
      return nullptr;
    }
    if (write_entry) {
      *rc = CqReserve(cq);
      if (*rc != 0) return nullptr;
    }
    Posted* posted = &posted_[free.back()];
    free.pop_back();
    posted->reserved = write_entry;
    if (transmit) {
      posted->covers = uncovered_;
      uncovered_ = 0;
    }
    return posted;
  }
  // A send queue entry for a send that reports nothing on success (an
  // fi_inject with no counter to count it): posted unsignaled, it takes no
  // slot, and the next signaled send's completion frees its entry (an RC
  // send queue completes in order). Its wr_id is the returned Posted, which
  // only a failure (a flush) reports. Null when it must be signaled: at
  // most half the queue goes unsignaled in a row, and one entry always
  // stays for a signaled send.
  Posted* TakeUnsignaled() {
    if (uncovered_ >= tx_slots_ / 2 || free_tx_.size() <= unsignaled_out_ + 1) {
      return nullptr;
    }
    ++uncovered_;
    ++unsignaled_out_;
    return &unsignaled_;
  }
  // Frees a slot after its completion.
  void Release(Posted* posted) {
    if (posted == &unsignaled_) return;  // freed by a later signaled send
    unsignaled_out_ -= posted->covers;
    posted->covers = 0;
    posted->reserved = false;
    if (!posted->registrations.empty()) posted->registrations.Clear();
    (posted->transmit ? free_tx_ : free_rx_).push_back(posted->index);
  }
  // Frees a slot whose request was never posted, and its room in `cq`.
  void Abandon(Posted* posted, UtilCq* cq);
  // Transmits posted and not yet completed.
  size_t transmits_out() const { return tx_slots_ - free_tx_.size(); }
  // At close: the CQ room promised to requests still out is given back
  // (closing reports nothing).
  void Unreserve(UtilEndpoint* util);

 private:
  std::vector<Posted> posted_;
  std::vector<uint32_t> free_tx_;
  std::vector<uint32_t> free_rx_;
  size_t tx_slots_ = 0;
  // What TakeUnsignaled hands out: a send's report with no entry.
  Posted unsignaled_;
  size_t unsignaled_out_ = 0;  // unsignaled sends whose entries are held
  uint32_t uncovered_ = 0;     // of them, posted since the last signaled
};

// Reports the completion `wc` of `posted` to `util`'s CQs and counters: on
// success `entry` (CompletionOf's, as the endpoint adjusted it) from
// `source`, counted on posted.cntr (a remote write's on the remote write
// counter); on failure (ReportWorkError) an error entry and an error
// count, logged unless it is a flush. A flushed request that reports
// nothing (an inject, a selective completion) stays silent: the
// connection's end says it.
void ReportWorkError(UtilEndpoint* util, const VerbsApi& api,
                     const fi_provider* log, const ibv_wc& wc,
                     const Posted& posted);
// The counter a successful completion `entry` of `posted` counts on: a
// remote write with immediate data consumed a receive and counts as a
// remote write; anything else on posted.cntr.
inline CntrKind SuccessCntr(const fi_cq_tagged_entry& entry,
                            const Posted& posted) {
  return (entry.flags & FI_REMOTE_WRITE) != 0 ? kRemoteWriteCntr
                                              : posted.cntr;
}

inline void ReportWorkCompletion(UtilEndpoint* util, const VerbsApi& api,
                                 const fi_provider* log, const ibv_wc& wc,
                                 const Posted& posted,
                                 const fi_cq_tagged_entry& entry,
                                 fi_addr_t source) {
  if (wc.status != IBV_WC_SUCCESS) {
    return ReportWorkError(util, api, log, wc, posted);
  }
  ReportSuccess(util, posted.transmit ? util->tx_cq : util->rx_cq,
                posted.request.write_entry, posted.reserved, entry, source,
                SuccessCntr(entry, posted));
}

// What a failed ibv_post_send or ibv_post_recv (`call`, which returns the
// errno) leaves: the slot given back, and -FI_EAGAIN or the error.
ssize_t PostFailed(const char* call, int rc, Posted* posted,
                   WorkSlots* slots, UtilCq* cq, const fi_provider* log);

// The verbs call that posts `wr` on `qp`: 0 or an errno.
inline int PostOnQueue(ibv_qp* qp, ibv_send_wr* wr) {
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, wr, &bad);
}
inline int PostOnQueue(ibv_qp* qp, ibv_recv_wr* wr) {
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, wr, &bad);
}

// Posts the send (ibv_send_wr) or receive (ibv_recv_wr) work request `wr`
// of `posted`, its pieces `sges[0..count)`, on `qp`: 0; else the slot goes
// back to `slots` (and its room to `cq`) and the result is -FI_EAGAIN for
// a full queue, or the error, logged on `log`. Inline: every message posts
// one.
template <typename VerbsWorkRequest>
ssize_t PostWorkRequest(ibv_qp* qp, VerbsWorkRequest* wr, ibv_sge* sges,
                        size_t count, Posted* posted, WorkSlots* slots,
                        UtilCq* cq, const fi_provider* log) {
  wr->wr_id = reinterpret_cast<uintptr_t>(&posted->request);
  wr->sg_list = sges;
  wr->num_sge = static_cast<int>(count);
  const int rc = PostOnQueue(qp, wr);
  if (rc == 0) return 0;
  constexpr bool kSend = std::is_same_v<VerbsWorkRequest, ibv_send_wr>;
  return PostFailed(kSend ? "ibv_post_send" : "ibv_post_recv", rc, posted,
                    slots, cq, log);
}

// Work completions taken from a CQ per ibv_poll_cq call.
inline constexpr int kPollBatch = 16;

// Takes every completion `cq` holds, calling `complete` with each; returns
// how many (a failed poll is logged on `log` and ends it).
template <typename Complete>
size_t PollCq(ibv_cq* cq, const fi_provider* log, Complete complete);

// An endpoint's device CQ with its completion channel, and whether a
// notification is requested (ibv_req_notify_cq) and wanted (ArmFds ran:
// something may block on the channel).
struct DeviceCq {
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  bool notify_armed = false;
  bool wants_notify = false;
};

// The creation attributes of a queue pair of `type` for `context` whose
// work completes on `cq`, with `caps`: sends signal only when asked.
inline ibv_qp_init_attr QpInitAttr(void* context, const DeviceCq& cq,
                                   const ibv_qp_cap& caps, ibv_qp_type type) {
  ibv_qp_init_attr attr = {};
  attr.qp_context = context;
  attr.send_cq = cq.cq;
  attr.recv_cq = cq.cq;
  attr.cap = caps;
  attr.qp_type = type;
  attr.sq_sig_all = 0;
  return attr;
}

// Makes the channel (non-blocking) and a CQ of `entries` on `domain`'s
// device, what is not made yet (a failed fi_enable may be retried).
absl::Status OpenDeviceCq(const VerbsDomain& domain, size_t entries,
                          void* context, DeviceCq* cq);
void CloseDeviceCq(const VerbsApi& api, DeviceCq* cq);
// Acks a notification that fired: it is used up.
void AckNotification(const VerbsApi& api, DeviceCq* cq);
// Requests a notification when one is wanted (or `wanted`) and none is in
// effect; true when it did, and the caller must poll again: what completed
// before the request will not signal.
bool ArmNotification(DeviceCq* cq, bool wanted);

template <typename Complete>
size_t PollCq(ibv_cq* cq, const fi_provider* log, Complete complete) {
  ibv_wc wc[kPollBatch];
  size_t total = 0;
  for (;;) {
    int n = ibv_poll_cq(cq, kPollBatch, wc);
    if (n < 0) {
      FI_WARN(log, FI_LOG_CQ, "ibv_poll_cq failed (%d)\n", n);
      return total;
    }
    for (int i = 0; i < n; ++i) complete(wc[i]);
    total += static_cast<size_t>(n);
    if (n < kPollBatch) return total;
  }
}

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_POSTED_H_

#include "fabric/providers/verbs/verbs_posted.h"

#include <rdma/fi_errno.h>
#include <errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/cq.h"

namespace fabric {
namespace verbs {

void WorkSlots::Init(size_t tx, size_t rx) {
  if (!posted_.empty()) return;
  tx_slots_ = tx;
  unsignaled_.request.flags = FI_SEND | FI_MSG;
  unsignaled_.request.write_entry = false;
  unsignaled_.cntr = kSendCntr;
  posted_.resize(tx + rx);
  for (uint32_t i = 0; i < tx + rx; ++i) {
    posted_[i].index = i;
    posted_[i].transmit = i < tx;
    (i < tx ? free_tx_ : free_rx_).push_back(i);
  }
}

void WorkSlots::Abandon(Posted* posted, UtilCq* cq) {
  if (posted == &unsignaled_) {
    --uncovered_;
    --unsignaled_out_;
    return;
  }
  if (posted->reserved) CqUnreserve(cq);
  // The unsignaled sends it was to free wait for the next one.
  if (posted->transmit) uncovered_ += posted->covers;
  posted->covers = 0;
  Release(posted);
}

void WorkSlots::Unreserve(UtilEndpoint* util) {
  for (Posted& posted : posted_) {
    if (!posted.reserved) continue;
    CqUnreserve(posted.transmit ? util->tx_cq : util->rx_cq);
    posted.reserved = false;
  }
}

void ReportWorkError(UtilEndpoint* util, const VerbsApi& api,
                     const fi_provider* log, const ibv_wc& wc,
                     const Posted& posted) {
  UtilCq* cq = posted.transmit ? util->tx_cq : util->rx_cq;
  fi_cq_err_entry error = ErrorOf(wc, posted.request);
  if (wc.status != IBV_WC_WR_FLUSH_ERR) {
    FI_WARN(log, FI_LOG_CQ, "work completion failed: %s (vendor error "
            "0x%x)\n", api.wc_status_str(wc.status), wc.vendor_err);
  }
  const bool silent =
      wc.status == IBV_WC_WR_FLUSH_ERR && !posted.request.write_entry;
  if (cq != nullptr && !silent) {
    CqWriteError(cq, error, posted.reserved);
  } else if (posted.reserved) {
    CqUnreserve(cq);
  }
  if (util->cntrs[posted.cntr] != nullptr) {
    CntrAddError(util->cntrs[posted.cntr], 1);
  }
}

ssize_t PostFailed(const char* call, int rc, Posted* posted,
                   WorkSlots* slots, UtilCq* cq, const fi_provider* log) {
  slots->Abandon(posted, cq);
  if (rc == ENOMEM) return -FI_EAGAIN;
  FI_WARN(log, FI_LOG_EP_DATA, "%s: %s\n", call, strerror(rc));
  return -rc;
}

absl::Status OpenDeviceCq(const VerbsDomain& domain, size_t entries,
                          void* context, DeviceCq* cq) {
  const VerbsApi& api = domain.api();
  if (cq->channel == nullptr) {
    cq->channel = api.create_comp_channel(domain.context());
    if (cq->channel == nullptr) return CallFailed("ibv_create_comp_channel");
  }
  FABRIC_RETURN_IF_ERROR(
      MakeNonBlocking(cq->channel->fd, "the completion channel"));
  if (cq->cq == nullptr) {
    cq->cq = api.create_cq(domain.context(), static_cast<int>(entries),
                           context, cq->channel, 0);
    if (cq->cq == nullptr) return CallFailed("ibv_create_cq");
  }
  return absl::OkStatus();
}

void CloseDeviceCq(const VerbsApi& api, DeviceCq* cq) {
  if (cq->cq != nullptr) api.destroy_cq(cq->cq);
  if (cq->channel != nullptr) api.destroy_comp_channel(cq->channel);
  cq->cq = nullptr;
  cq->channel = nullptr;
}

void AckNotification(const VerbsApi& api, DeviceCq* cq) {
  ibv_cq* fired = nullptr;
  void* context = nullptr;
  while (cq->notify_armed &&
         api.get_cq_event(cq->channel, &fired, &context) == 0) {
    api.ack_cq_events(fired, 1);
    cq->notify_armed = false;
  }
}

bool ArmNotification(DeviceCq* cq, bool wanted) {
  if (wanted) cq->wants_notify = true;
  if (!cq->wants_notify || cq->notify_armed) return false;
  if (ibv_req_notify_cq(cq->cq, 0) != 0) return false;
  cq->notify_armed = true;
  return true;
}

}  // namespace verbs
}  // namespace fabric

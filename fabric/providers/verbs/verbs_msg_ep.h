// File: fabric/providers/verbs/verbs_msg_ep.h
//
// The verbs provider's FI_EP_MSG endpoint: an RC queue pair connected
// through librdmacm. Its connection id and event channel are its own (the
// fabric's progress engine reads the channel: EQ reads and waits advance
// connection setup); its queue pair's sends and receives complete on an
// ibv CQ of its own whose completion channel the domain's engine watches
// (CQ and counter reads advance them), and each completion becomes an
// entry of the util CQs and counters the endpoint is bound to. While
// transmits wait without completing, the data pass also reads the
// connection's events every 256 idle passes, so that a peer's disconnect
// flushes them even when nobody reads the EQ. Queue pairs get an RNR timer
// of 0.64 ms (the connection manager leaves 655 ms).
//
// Data operations: messages with remote CQ data (immediate data), RMA
// read and write (with immediate data) and the atomics the device does
// (64-bit fetch-and-add and compare-and-swap), FI_INJECT through inline
// sends, FI_FENCE. Send queue requests are signaled (a completion frees
// the slot whether or not the application wants an entry), but for
// fi_inject with no counter bound, which goes unsignaled and is freed by
// the next signaled one (WorkSlots::TakeUnsignaled). On a
// domain without FI_MR_LOCAL, buffers passed without a descriptor are
// registered through the domain's cache and held by their slot until it
// completes.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_MSG_EP_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_MSG_EP_H_

#include <infiniband/verbs.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/util/progress.h"
#include "fabric/providers/verbs/verbs_completion.h"
#include "fabric/providers/verbs/verbs_domain.h"
#include "fabric/providers/verbs/verbs_msg_state.h"
#include "fabric/providers/verbs/verbs_posted.h"

namespace fabric {
namespace verbs {

struct VerbsMsgEp;
struct VerbsSrx;

// An FI_CONNREQ's handle: the connection id librdmacm made for the
// request, until fi_endpoint takes it (and fi_accept answers) or fi_reject
// refuses it.
struct VerbsConnReq {
  fid conn_fid;  // first: info->handle is this (FI_CLASS_CONNREQ)
  rdma_cm_id* id = nullptr;
  fid_pep* pep = nullptr;
  // The request's RDMA read and atomic depths, from this side's point of
  // view (the CM swapped the requester's): bounds of what the accept
  // offers.
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
};
FABRIC_BEGINS_WITH(VerbsConnReq, conn_fid);

// The endpoint's connection events (its rdma_cm channel), advanced by the
// fabric's engine.
class VerbsCmEvents : public ProgressSource {
 public:
  explicit VerbsCmEvents(VerbsMsgEp* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

 private:
  VerbsMsgEp* ep_;
};

// The endpoint's work completions (its ibv CQ), advanced by the domain's
// engine (verbs_msg_completions.cc). Polling the CQ is as cheap as asking
// poll(2) about the channel, so passes poll it directly; the channel
// signals only after ibv_req_notify_cq, which ArmFds asks for. While the
// endpoint is the only producer of its CQs, fi_cq_read takes completions
// from the device CQ straight into its buffer (ReadDirect).
class VerbsCompletions : public ProgressSource, public CqDirectProducer {
 public:
  explicit VerbsCompletions(VerbsMsgEp* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  bool poll_directly() const override { return true; }
  void ArmFds() override;
  size_t ReadDirect(UtilCq* cq, void* buf, size_t count,
                    fi_addr_t* sources) override;

 private:
  VerbsMsgEp* ep_;
};

// A receive posted before the queue pair exists (between fi_enable and
// the connection's start), kept until it does.
struct EarlyReceive {
  std::vector<ibv_sge> sges;
  Posted* posted;
};

struct VerbsMsgEp {
  VerbsMsgEp() : cm_events(this), completions(this) {}

  UtilEndpoint util;  // first: the application's fid_ep* is this
  VerbsDomain* domain = nullptr;
  VerbsCmEvents cm_events;
  VerbsCompletions completions;
  MsgState state ABSL_GUARDED_BY(util.mutex);
  rdma_event_channel* cm_channel = nullptr;
  rdma_cm_id* id = nullptr;
  DeviceCq device_cq;  // made by fi_enable
  // Made when the connection starts (id->qp).
  ibv_qp* qp ABSL_GUARDED_BY(util.mutex) = nullptr;
  uint32_t max_inline = 0;  // what the queue pair took
  // The domain has no FI_MR_LOCAL: buffers without descriptors are
  // registered here.
  bool registers_buffers = false;
  // Opened on an FI_CONNREQ: fi_accept next.
  bool from_request ABSL_GUARDED_BY(util.mutex) = false;
  bool cm_registered = false;
  bool completions_registered = false;
  WorkSlots slots;  // one per send and receive queue entry
  // Data passes without a completion while transmits were out.
  uint32_t idle_passes ABSL_GUARDED_BY(util.mutex) = 0;
  std::vector<EarlyReceive> early_receives ABSL_GUARDED_BY(util.mutex);
  VerbsSrx* srx = nullptr;  // the shared receive context bound (verbs_srx.h)
  LiveRegionCache regions ABSL_GUARDED_BY(util.mutex);  // descriptors checked
  // Where the old value of an fi_atomic (which returns none) lands: a
  // word per send queue slot, registered with the device.
  std::vector<uint64_t> atomic_scratch;
  ibv_mr* scratch_mr = nullptr;
  // What an accept offers for RDMA reads and atomics (from the request).
  uint8_t responder_resources ABSL_GUARDED_BY(util.mutex) = 0;
  uint8_t initiator_depth ABSL_GUARDED_BY(util.mutex) = 0;
  // fi_connect's, packed.
  std::vector<uint8_t> connect_data ABSL_GUARDED_BY(util.mutex);

  const VerbsApi& api() const { return domain->api(); }
  const fi_provider* log() const {
    return util.domain->fabric->provider->c_provider();
  }
  ProgressEngine* data_engine() const { return util.domain->progress.get(); }
  ProgressEngine* cm_engine() const {
    return util.domain->fabric->progress.get();
  }
};
FABRIC_BEGINS_WITH(VerbsMsgEp, util);

inline VerbsMsgEp* ToVerbsMsgEp(fid_ep* ep) { return FidCast<VerbsMsgEp>(ep); }

// Provider::OpenEndpoint / OpenPassiveEndpoint of verbs.
int OpenVerbsMsgEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                   void* context);
int OpenVerbsPassiveEp(fid_fabric* fabric, fi_info* info, fid_pep** pep,
                       void* context);

// The connection request behind an FI_CONNREQ handle, or null.
VerbsConnReq* AsVerbsConnReq(fid* handle);
// fi_endpoint on a request: the request's id and what it offered, the
// request gone afterwards; false when the handle is not a pending request.
bool TakeVerbsConnReq(fid* handle, VerbsConnReq* taken);

// The data path (verbs_msg_ops.cc): installs the endpoint's msg, rma and
// atomic tables.
void InstallVerbsDataOps(VerbsMsgEp* ep, fi_ops_cm* cm);
// Posts receives kept while the queue pair did not exist.
int PostEarlyReceives(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex);
// Acts on the connection's pending rdma_cm events.
void ReadCmEventsLocked(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex);

// Between the endpoint's life (verbs_msg_ep.cc) and its connection
// management (verbs_msg_cm.cc): fi_enable; starting to read the rdma_cm
// channel; moving the queue pair (if any) to the error state, where its
// posted work flushes; the endpoint's fi_ops_cm; its rdma_cm channel and
// connection id (a fresh id, or the connection request's moved onto the
// channel); logging a failure and returning its negative fi_errno.
int Enable(VerbsMsgEp* ep);
void WatchCmEvents(VerbsMsgEp* ep);
void MoveQpToError(VerbsMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex);
extern fi_ops_cm kMsgEpCmOps;
absl::Status OpenConnectionId(VerbsMsgEp* ep, const fi_info& info)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->util.mutex);
int FailEp(const VerbsMsgEp& ep, const absl::Status& status);
int FailEp(const VerbsMsgEp& ep, int fi_errno, const std::string& what);
// Frees a slot after its completion (or when it was never posted): the
// endpoint's, or its shared receive context's.
void ReleaseSlot(VerbsMsgEp* ep, Posted* posted);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_MSG_EP_H_

// File: fabric/providers/verbs/verbs_dgram_ep.h
//
// The verbs provider's FI_EP_DGRAM endpoint: an unreliable datagram (UD)
// queue pair, made by fi_enable on the domain's first ACTIVE port and
// moved to RTS at once (no connection). Sends name their peer through the
// bound AV's address handles (verbs_ud_av.h); a datagram is at most the
// port's MTU (max_msg_size); one sent to an endpoint without a posted
// receive is dropped by the peer's device, as datagrams are.
//
// fi_send, fi_sendv, fi_sendmsg, fi_inject, fi_senddata and fi_injectdata
// (remote CQ data as immediate data, 4 bytes), fi_recv, fi_recvv and
// fi_recvmsg; FI_SOURCE on receives. Each receive's first scatter-gather
// entry is a 40-byte buffer of the endpoint's own, registered once, where
// the device puts the GRH (the sender's GID): the application's buffers
// get only the message. A receive with room for less than the port's MTU
// ends with a piece of an overflow buffer of the endpoint's: a device
// handed a datagram longer than a receive moves the queue pair to the
// error state (soft-RoCE did: every later receive was lost), so none is
// ever too short for the device, and a longer datagram than the
// application's buffers completes with FI_ETRUNC (olen: what did not
// fit). Sends and receives complete on one ibv CQ of the endpoint's, read
// by the domain's progress engine (CQ and counter reads advance it), each
// completion an entry of the util CQs and counters the endpoint is bound
// to. No RMA, atomics, tagged messages, fi_cancel or shared contexts
// (-FI_ENOSYS).
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_DGRAM_EP_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_DGRAM_EP_H_

#include <infiniband/verbs.h>
#include <rdma/fi_endpoint.h>

#include <array>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/util/progress.h"
#include "fabric/providers/verbs/verbs_domain.h"
#include "fabric/providers/verbs/verbs_posted.h"
#include "fabric/providers/verbs/verbs_ud_attr.h"
#include "fabric/providers/verbs/verbs_ud_av.h"

namespace fabric {
namespace verbs {

struct VerbsDgramEp;

// The endpoint's work completions, advanced by the domain's engine (as
// VerbsCompletions does for MSG endpoints).
class DgramCompletions : public ProgressSource {
 public:
  explicit DgramCompletions(VerbsDgramEp* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  bool poll_directly() const override { return true; }
  void ArmFds() override;

 private:
  VerbsDgramEp* ep_;
};

struct VerbsDgramEp {
  VerbsDgramEp() : completions(this) {}

  UtilEndpoint util;  // first: the application's fid_ep* is this
  VerbsDomain* domain = nullptr;
  VerbsUdAv* av = nullptr;  // bound with fi_ep_bind
  DgramCompletions completions;
  UdPort port;
  DeviceCq device_cq;  // made by fi_enable
  ibv_qp* qp = nullptr;  // made by fi_enable
  uint32_t max_inline = 0;  // what the queue pair took
  bool registers_buffers = false;  // no FI_MR_LOCAL (verbs_sges.h)
  bool completions_registered = false;
  WorkSlots slots;  // one per send and receive queue entry
  // Where each receive slot's GRH lands, registered as grh_mr, and the
  // room its application buffers have.
  std::vector<std::array<uint8_t, kGrhSize>> grh;
  ibv_mr* grh_mr = nullptr;
  std::vector<size_t> room;
  // Where the part of a datagram beyond a receive's room goes (the port's
  // MTU, shared by every receive: what lands there is dropped); its size
  // bounds sends too.
  std::vector<uint8_t> overflow;
  ibv_mr* overflow_mr = nullptr;
  LiveRegionCache regions ABSL_GUARDED_BY(util.mutex);  // descriptors checked
  // The last destination a send looked up, while no entry left the AV.
  fi_addr_t last_addr = FI_ADDR_NOTAVAIL;
  uint64_t last_drops = 0;
  UdDestination last_destination;

  const VerbsApi& api() const { return domain->api(); }
  const fi_provider* log() const {
    return util.domain->fabric->provider->c_provider();
  }
};
FABRIC_BEGINS_WITH(VerbsDgramEp, util);

inline VerbsDgramEp* ToVerbsDgramEp(fid_ep* ep) {
  return FidCast<VerbsDgramEp>(ep);
}

// Provider::OpenEndpoint of verbs for FI_EP_DGRAM.
int OpenVerbsDgramEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                     void* context);

// The data path (verbs_dgram_ops.cc): installs the endpoint's msg table
// (and the tables it lacks).
void InstallDgramDataOps(VerbsDgramEp* ep, fi_ops_cm* cm);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_DGRAM_EP_H_

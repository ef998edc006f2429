// File: fabric/providers/verbs/verbs_srx.h
//
// A shared receive context of a verbs MSG domain (fi_srx_context): an ibv
// shared receive queue (SRQ). Receives posted on it (fi_recv, fi_recvv,
// fi_recvmsg) are taken in the order they were posted by the messages
// arriving on any endpoint bound to it, and each completes on the CQ (and
// counters) of the endpoint it arrived on. An endpoint binds it before
// fi_enable: its queue pair is made on the SRQ, with no receive queue of
// its own (its device CQ holds the SRQ's depth of receives), and fi_recv
// on the endpoint is -FI_EOPNOTSUPP. An endpoint that closes gives the
// receives its queue pair took back to the context, unreported.
//
// The endpoint a receive will complete on is not known when it is posted,
// so no CQ room is reserved for it: a full CQ takes its entry past its
// size (util/cq.h), nothing is lost. fi_cancel is -FI_ENOSYS (an SRQ
// cannot take back a posted receive), and the context closes only once no
// endpoint is bound (-FI_EBUSY).
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_SRX_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_SRX_H_

#include <infiniband/verbs.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mutex.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"

namespace fabric {
namespace verbs {

struct VerbsSrx {
  fid_ep ep_fid;  // first: fi_srx_context's fid_ep is this
  UtilDomain* util_domain = nullptr;
  VerbsDomain* domain = nullptr;
  ibv_srq* srq = nullptr;
  size_t iov_limit = 0;
  size_t max_msg_size = 0;
  uint64_t op_flags = 0;        // the context's default receive flags
  bool registers_buffers = false;  // the domain has no FI_MR_LOCAL
  std::atomic<int> bound{0};    // endpoints bound to it
  // One slot per SRQ entry; completions on any bound endpoint free them.
  Mutex mutex;  // also held while posting
  std::vector<Posted> posted;
  std::vector<uint32_t> free ABSL_GUARDED_BY(mutex);

  const fi_provider* log() const {
    return util_domain->fabric->provider->c_provider();
  }
};
FABRIC_BEGINS_WITH(VerbsSrx, ep_fid);

// Provider::OpenSharedRxContext of verbs MSG domains.
int OpenVerbsSrx(fid_domain* domain, fi_rx_attr* attr, fid_ep** srx,
                 void* context);
// The context behind `object`, or null when it is not one.
VerbsSrx* AsVerbsSrx(fid* object);
// Frees a slot of the context after its completion.
void ReleaseSrxSlot(VerbsSrx* srx, Posted* posted);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_SRX_H_

// File: fabric/providers/util/passive_ep.h
//
// What the passive endpoints of every connection-oriented provider share
// (fi_passive_ep, fi_pep_bind, FI_CONNREQ), and how an endpoint's
// connection events reach its EQ. A provider embeds UtilPep first in its
// passive endpoint, sets its own fi_ops (close calls ReleaseUtilPep; bind
// and control are BindUtilPep and ControlUtilPep) and fi_ops_cm, and posts
// each request with PostConnReq.
#ifndef FABRIC_PROVIDERS_UTIL_PASSIVE_EP_H_
#define FABRIC_PROVIDERS_UTIL_PASSIVE_EP_H_

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "fabric/api/core/info.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mutex.h"
#include "fabric/providers/util/progress.h"

namespace fabric {

struct UtilPep {
  fid_pep pep_fid;  // first: the application's fid_pep* is this
  UtilFabric* fabric = nullptr;
  InfoPtr info;  // fi_passive_ep's, copied (handle cleared)
  // FI_OPT_CM_DATA_SIZE: the most bytes fi_connect, fi_accept and
  // fi_reject carry on this provider.
  size_t cm_data_size = 0;
  UtilEq* eq = nullptr;  // bound with fi_pep_bind
  Mutex mutex;           // taken by the provider around its state
  bool listening ABSL_GUARDED_BY(mutex) = false;

  const fi_provider* log() const { return fabric->provider->c_provider(); }
  // Whether its connection requests progress on the fabric engine's own
  // thread (control_progress other than FI_PROGRESS_MANUAL).
  bool auto_progress() const {
    const fi_domain_attr* attr = info->domain_attr;
    return attr == nullptr || attr->control_progress != FI_PROGRESS_MANUAL;
  }
};
FABRIC_BEGINS_WITH(UtilPep, pep_fid);

// Whether fi_listen succeeded on `pep` (read under its lock).
inline bool Listening(UtilPep& pep) {
  MutexLock lock(pep.mutex);
  return pep.listening;
}

// Logs `status` as the reason a passive endpoint's call fails; its
// negative fi_errno.
int FailPep(const UtilPep& pep, const absl::Status& status);

// fi_listen of a passive endpoint: -FI_ENOEQ without an EQ bound; once
// listening, later calls do nothing; else `start()` (called with
// pep->mutex held)
// makes the provider's endpoint listen, and returns its failure, and then
// `events` joins the fabric's progress engine.
template <typename Start>
int ListenUtilPep(UtilPep* pep, ProgressSource* events, Start start) {
  MutexLock lock(pep->mutex);  // Add may be called under it
  if (pep->eq == nullptr) {
    return FailPep(*pep, FiError(FI_ENOEQ, "fi_listen: no EQ bound"));
  }
  if (pep->listening) return 0;
  absl::Status started = start();
  if (!started.ok()) return FailPep(*pep, started);
  pep->listening = true;
  pep->fabric->progress->Add(events);
  return 0;
}

// Fills `pep` for `fabric` from `info` with the provider's tables and its
// connection-data limit, and counts it in the fabric. Its fi_ops_ep answers
// fi_getopt(FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE) (read-only; fi_setopt
// has no option a passive endpoint takes: -FI_ENOPROTOOPT). FI_ENOMEM
// when info cannot be copied.
absl::Status InitUtilPep(UtilPep* pep, UtilFabric* fabric, const fi_info& info,
                         void* context, fi_ops* fid_ops, fi_ops_cm* cm_ops,
                         size_t cm_data_size);

// Drops what InitUtilPep and BindUtilPep took (the EQ, the fabric).
void ReleaseUtilPep(UtilPep* pep);

// fi_ops::bind of a passive endpoint: one EQ of its fabric, flags 0.
int BindUtilPep(fid* object, fid* bound, uint64_t flags);

// fi_ops::control of a passive endpoint: FI_ENABLE (nothing to do);
// -FI_ENOSYS for other commands.
int ControlUtilPep(fid* object, int command, void* arg);

// Posts FI_CONNREQ on the passive endpoint's EQ: `info` (info->handle set
// to the request) with the requester's `len` bytes of connection data.
// False, with info freed and a warning logged, when there is no EQ or it
// is full: the caller refuses the request.
bool PostConnReq(UtilPep* pep, InfoPtr info, const void* data, size_t len);

// Queues a connection event of `endpoint` (FI_CONNECTED, FI_SHUTDOWN) on
// `eq` with `len` bytes of connection data; a full EQ loses it (logged).
void PostConnectionEvent(fid_eq* eq, fid* endpoint, uint32_t event,
                         const void* data, size_t len, const fi_provider* log);

// Queues a failed connection step of `endpoint` on `eq`: err and
// prov_errno, and the peer's `len` bytes of data (a rejection's).
void PostConnectionError(fid_eq* eq, fid* endpoint, int err, int prov_errno,
                         const void* data, size_t len);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_PASSIVE_EP_H_

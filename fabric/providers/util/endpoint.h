// File: fabric/providers/util/endpoint.h
//
// What every provider's active endpoint shares (fi_endpoint(3)): the
// objects bound to it (EQ, AV, CQs, counters) with their reference counts,
// fi_enable's checks, FI_GETOPSFLAG/FI_SETOPSFLAG, fi_getopt/fi_setopt,
// and how a finished operation is reported to the CQs and counters
// (FI_SELECTIVE_COMPLETION included). A provider embeds UtilEndpoint
// first in its own endpoint and calls these functions from its ops tables.
#ifndef FABRIC_PROVIDERS_UTIL_ENDPOINT_H_
#define FABRIC_PROVIDERS_UTIL_ENDPOINT_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cassert>
#include <mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/futex_mutex.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {

// The counters an endpoint can bind, by the fi_ep_bind flag that names them.
enum CntrKind {
  kSendCntr,         // FI_SEND
  kRecvCntr,         // FI_RECV
  kReadCntr,         // FI_READ
  kWriteCntr,        // FI_WRITE
  kRemoteReadCntr,   // FI_REMOTE_READ
  kRemoteWriteCntr,  // FI_REMOTE_WRITE
  kCntrKinds,
};
inline constexpr uint64_t kCntrBindFlag[kCntrKinds] = {
    FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE};

// A mutex that does nothing when the application serializes access itself
// (AppSerializesDomain: FI_THREAD_DOMAIN with manual progress, so no
// thread of ours touches the endpoint either).
// For the thread-safety analysis it is always taken (mutex.h).
class ABSL_LOCKABLE OptionalMutex {
 public:
  void set_needed(bool needed) { needed_ = needed; }
  bool needed() const { return needed_; }
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (needed_) mutex_.lock();
  }
  void unlock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (needed_) mutex_.unlock();
  }
  // Where the analysis cannot see the caller's lock (a callback the data
  // path makes under it): says it is held, and checks in debug builds that
  // it is held at all (not by whom).
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {
    assert(!needed_ || mutex_.held());
  }

 private:
  bool needed_ = true;
  FutexMutex mutex_;
};

struct UtilEndpoint {
  fid_ep ep_fid;  // first: the application's fid_ep* is this
  UtilDomain* domain = nullptr;
  InfoPtr info;  // the endpoint's attributes (fi_endpoint's info, copied)
  UtilEq* eq = nullptr;
  UtilAv* av = nullptr;
  UtilCq* tx_cq = nullptr;
  UtilCq* rx_cq = nullptr;
  bool tx_selective = false;  // bound with FI_SELECTIVE_COMPLETION
  bool rx_selective = false;
  UtilCntr* cntrs[kCntrKinds] = {};
  uint64_t tx_op_flags = 0;  // FI_GETOPSFLAG/FI_SETOPSFLAG
  uint64_t rx_op_flags = 0;
  size_t min_multi_recv = 64;  // FI_OPT_MIN_MULTI_RECV
  size_t cm_data_size = 0;     // FI_OPT_CM_DATA_SIZE (connected endpoints)
  std::atomic<bool> enabled{false};
  std::string auth_key;  // AuthKeyOf(*info): what its peers must prove
  // Taken by the provider around the endpoint's state.
  OptionalMutex mutex;
};
FABRIC_BEGINS_WITH(UtilEndpoint, ep_fid);

// Fills `ep` for `domain` from `info` (which must name an endpoint type);
// the provider has already set ep->ep_fid's ops tables. Counts the endpoint
// in the domain: FI_ENOSPC when domain_attr->ep_cnt are open.
absl::Status InitUtilEndpoint(UtilEndpoint* ep, UtilDomain* domain,
                              const fi_info* info, void* context,
                              fi_ops* fid_ops);

// Drops every reference the endpoint holds (bound objects, domain).
void ReleaseUtilEndpoint(UtilEndpoint* ep);

// fi_ep_bind: an EQ, AV, CQ (FI_TRANSMIT, FI_RECV, FI_SELECTIVE_COMPLETION)
// or counter (FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
// FI_REMOTE_WRITE) of the endpoint's domain, before fi_enable.
int BindUtilEndpoint(UtilEndpoint* ep, fid* bound, uint64_t flags);

// What fi_enable needs bound: a CQ or counter for each direction the
// endpoint's capabilities use (-FI_ENOCQ), an AV for connectionless
// endpoints (-FI_ENOAV), an EQ for connected ones (-FI_ENOEQ).
int CheckEnable(const UtilEndpoint& ep);

// fi_control commands every endpoint handles: FI_GETOPSFLAG, FI_SETOPSFLAG.
// -FI_ENOSYS for others, which the provider handles (FI_ENABLE).
int ControlUtilEndpoint(UtilEndpoint* ep, int command, void* arg);

// fi_getopt / fi_setopt at FI_OPT_ENDPOINT: FI_OPT_MIN_MULTI_RECV, and
// FI_OPT_CM_DATA_SIZE (read-only).
int GetOptUtilEndpoint(UtilEndpoint* ep, int level, int name, void* value,
                       size_t* len);
int SetOptUtilEndpoint(UtilEndpoint* ep, int level, int name,
                       const void* value, size_t len);
// Copies a size_t option's `answer` out as fi_getopt does: -FI_ETOOSMALL
// (with *len set to what it needs) when *len is too small.
int CopySizeOpt(size_t answer, void* value, size_t* len);

// The authorization key endpoints opened with `info` use: ep_attr's when it
// has one, else the domain's (fi_domain(3): endpoints inherit it).
std::string AuthKeyOf(const fi_info& info);

// Whether an operation posted with `op_flags` writes a CQ entry when it
// succeeds (errors always do). Inline: every operation asks.
inline bool WantsTxEntry(const UtilEndpoint& ep, uint64_t op_flags) {
  return ep.tx_cq != nullptr &&
         (!ep.tx_selective || (op_flags & FI_COMPLETION) != 0);
}
inline bool WantsRxEntry(const UtilEndpoint& ep, uint64_t op_flags) {
  return ep.rx_cq != nullptr &&
         (!ep.rx_selective || (op_flags & FI_COMPLETION) != 0);
}

// The error entry of the operation `entry` describes, failed with `err`
// (positive fi_errno); prov_errno is left to the caller, which sets it to
// `err` or another positive fi_errno (error_entry.h).
fi_cq_err_entry ErrorEntryOf(const fi_cq_tagged_entry& entry, int err,
                             size_t olen);

// Reports a finished operation: a CQ entry when `write_entry` (the slot was
// reserved with CqReserve when `reserved`), and one count on `cntr`.
void ReportSuccess(UtilEndpoint* ep, UtilCq* cq, bool write_entry,
                   bool reserved, const fi_cq_tagged_entry& entry,
                   fi_addr_t source, CntrKind cntr);
// Reports a failed operation: an error entry (with olen and err) and one
// error count on `cntr`.
void ReportError(UtilEndpoint* ep, UtilCq* cq, bool reserved,
                 const fi_cq_tagged_entry& entry, int err, size_t olen,
                 CntrKind cntr);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_ENDPOINT_H_

// File: fabric/providers/util/av.h
//
// The address vector of the IP providers (fi_av(3)): FI_AV_MAP and
// FI_AV_TABLE (both hand out consecutive indices; removed ones are not
// reused), fi_av_insert for the domain's address format (FI_SOCKADDR,
// FI_SOCKADDR_IN, FI_SOCKADDR_IN6, or packed NUL-terminated FI_ADDR_STR
// strings), insertsvc, insertsym, remove, lookup, straddr, FI_AV_USER_ID,
// FI_SYNC_ERR, and asynchronous inserts (FI_EVENT: FI_AV_COMPLETE on the
// bound EQ). Providers translate fi_addr_t with AvLookupIp and back with
// AvFindIp.
//
// Named AVs (fi_av_attr::name; -FI_ENOSYS unless the domain was opened with
// FI_SHARED_AV) live in POSIX shared memory (shared_av.h): without FI_READ
// the open creates the table, sized by attr->count, or joins an existing one
// as another writer; with FI_READ it maps an existing table read-only
// (-FI_ENOENT when there is none), and inserts and removes fail with
// -FI_EOPNOTSUPP. The table does not grow: inserts past its size fail with
// -FI_ENOSPC. fi_addr_t values are table indices, the same in every process
// whatever the mapping address, so attr->map_addr (fi_av(3): the base of
// the fi_addr_t values for processes sharing the AV) is not needed to share
// them: a given one is ignored, a NULL one is set to where this process
// mapped the table (informational: nothing is ever reached through it).
// FI_AV_USER_ID ids stay in the process that inserted. The table lives
// while any process holds it open: the last close removes it, and a table
// left by processes that all died is replaced by a new one at the next
// writer's open (shared_av.h). `entries` and `index` are this process's view of
// the table, refreshed from it when a lookup or find misses, and before a
// remove or AvAddresses; so an address another process removed stays
// visible to lookups here until then.
//
// AV sets (fi_av_set) are in av_set.h; each open set counts in
// open_children.
#ifndef FABRIC_PROVIDERS_UTIL_AV_H_
#define FABRIC_PROVIDERS_UTIL_AV_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_ext.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mutex.h"
#include "fabric/providers/util/shared_av.h"

namespace fabric {

struct AvEntry {
  IpAddress address;
  fi_addr_t user_id;  // FI_AV_USER_ID, else the entry's own fi_addr_t
};

struct UtilAv {
  fid_av av_fid;  // first: the application's fid_av* is this
  UtilDomain* domain;
  fi_av_type type;
  uint32_t addr_format;
  uint64_t flags;         // fi_av_attr::flags
  UtilEq* eq = nullptr;   // bound for FI_EVENT
  Mutex mutex;
  // By fi_addr_t.
  std::vector<std::optional<AvEntry>> entries ABSL_GUARDED_BY(mutex);
  // Address key -> fi_addr_t.
  std::map<std::string, fi_addr_t> index ABSL_GUARDED_BY(mutex);
  std::unique_ptr<SharedAvTable> shared;        // named AVs only
  std::atomic<int> open_children{0};            // endpoints and AV sets
  // Entries dropped so far (fi_av_remove, a named AV's refresh): what
  // AvLookupCache checks. Bumped under `mutex`.
  std::atomic<uint64_t> drops{0};
  fid_peer_av owner_fid;  // what a peer provider imports (peer_av.h)
};
FABRIC_BEGINS_WITH(UtilAv, av_fid);

// Logs `status` as a warning of `av` and returns its negative fi_errno.
int AvFail(const UtilAv& av, const absl::Status& status);

// What a provider's own AV (one embedding UtilAv first, with its own
// insert, remove and lookup) shares with this one:
// fi_av_open's checks of `attr` (type, flags, no rx_ctx_bits, names only
// with FI_SHARED_AV),
absl::Status CheckAvAttr(const UtilDomain& domain, const fi_av_attr& attr);
// fi_av_insert's checks (FI_READ, NULL input, flags, FI_SYNC_ERR's array,
// FI_EVENT's EQ),
absl::Status CheckInsert(const UtilAv& av, const void* input, size_t count,
                         uint64_t flags, void* context);
// fi_av_bind (one EQ of the domain's fabric, flags 0),
int BindUtilAv(fid* object, fid* bound, uint64_t flags);
// and how each insert's outcome is reported as fi_av_insert(3) asks:
// FI_SYNC_ERR errors, an EQ error entry per failure and FI_AV_COMPLETE
// with FI_EVENT; Finish is fi_av_insert's return value.
struct InsertReport {
  UtilAv& av;
  uint64_t flags;
  void* context;
  int inserted = 0;

  void Failed(size_t i, int fi_errno);
  void Succeeded(size_t i);
  int Finish();
};

// The UtilAv behind `object`, or null when it is not one of our AVs.
UtilAv* AsUtilAv(fid* object);

// fi_ops_domain::av_open of UtilDomain.
int OpenUtilAv(fid_domain* domain, fi_av_attr* attr, fid_av** av,
               void* context);

// The address of `fi_addr`; FI_EINVAL status when it names no entry.
absl::StatusOr<IpAddress> AvLookupIp(UtilAv* av, fi_addr_t fi_addr);

// The last address a transmit path looked up, kept while no entry has left
// the AV: sends to the same peer again and again skip the AV's lock and
// the copy. Guarded by its owner (an endpoint's lock).
class AvLookupCache {
 public:
  // The address of `fi_addr` in `av`, valid until the next Lookup; FI_EINVAL
  // status when it names no entry.
  absl::StatusOr<const IpAddress*> Lookup(UtilAv* av, fi_addr_t fi_addr);

 private:
  const UtilAv* av_ = nullptr;
  fi_addr_t fi_addr_ = FI_ADDR_NOTAVAIL;
  uint64_t drops_ = 0;
  IpAddress address_;
};

// Entries added so far to any AV of the process (fi_av_insert, a named AV's
// refresh), each counted after it can be found: endpoints look up again the
// senders of queued messages that arrived before their address was
// inserted when it moved (tcp's ResolveQueuedSenders; a message may be held
// by an endpoint bound to another AV than the one matching it).
uint64_t AvInsertsSoFar();

// The fi_addr_t of `address` (FI_SOURCE), or FI_ADDR_NOTAVAIL.
fi_addr_t AvFindIp(UtilAv* av, const IpAddress& address);

// The fi_addr_t of every address in the AV, in ascending order (a named AV's
// view is refreshed first).
std::vector<fi_addr_t> AvAddresses(UtilAv* av);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_AV_H_

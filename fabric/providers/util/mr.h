// File: fabric/providers/util/mr.h
//
// Memory regions shared by all providers (fi_mr(3)): fi_mr_reg, regv and
// regattr (with the HMEM iface and device), keys (random and unguessable
// with FI_MR_PROV_KEY, the application's otherwise, unique per domain),
// fi_mr_bind to a counter, fi_mr_enable, fi_mr_refresh, and asynchronous
// completion (FI_MR_COMPLETE on the EQ bound to the domain with FI_REG_MR).
// A region carries an authorization key: fi_mr_attr's (API >= 1.5) or the
// domain's; only endpoints that use the same key reach it.
// Providers check every remote access with MrResolveRemote.
#ifndef FABRIC_PROVIDERS_UTIL_MR_H_
#define FABRIC_PROVIDERS_UTIL_MR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/fid_cast.h"

namespace fabric {

struct UtilEndpoint;

struct UtilMr {
  fid_mr mr_fid;  // first: the application's fid_mr* is this
  UtilDomain* domain;
  std::vector<iovec> iov;
  uint64_t access;
  uint64_t offset;
  fi_hmem_iface iface;
  uint64_t device;
  UtilCntr* cntr = nullptr;  // bound with FI_REMOTE_WRITE: counts writes
  uint64_t cntr_flags = 0;
  // FI_MR_ENDPOINT: the endpoint bound with fi_mr_bind, and whether
  // fi_mr_enable has made the region usable (always, without that mode).
  UtilEndpoint* ep = nullptr;
  bool enabled = true;
  // Only peers that proved this key (their endpoints' key) may access it.
  std::string auth_key;
  // What the domain's DomainResources registered with a device (a verbs
  // region), or null. mr_fid.mem_desc is then what that provider's
  // endpoints take as a descriptor; otherwise it is this UtilMr.
  void* device_region = nullptr;
};
FABRIC_BEGINS_WITH(UtilMr, mr_fid);

// fi_ops_mr of UtilDomain.
extern fi_ops_mr kUtilMrOps;

// The open region whose fi_mr_desc is `desc`, or null when `desc` is none
// (an application's made-up value, a closed region's): what a transfer's
// descriptor is checked against before it is read.
const UtilMr* LiveRegion(const void* desc);

// LiveRegion for one caller that checks the same descriptor again and
// again (a data path posting from one registered buffer): the last
// descriptor found live stays known to be live until a region of the
// process closes, and is then looked up again. Not thread-safe: one per
// caller, under the caller's lock.
class LiveRegionCache {
 public:
  // Inline while nothing changed: every posted buffer asks.
  bool IsLive(const void* desc) {
    if (desc != nullptr && desc == known_ &&
        closes_ == regions_closed.load(std::memory_order_acquire)) {
      return true;
    }
    return LookUp(desc);
  }

  // Regions of the process closed so far.
  static std::atomic<uint64_t> regions_closed;

 private:
  bool LookUp(const void* desc);

  const void* known_ = nullptr;
  uint64_t closes_ = 0;  // regions closed when `known_` was found
};

// A remote access arriving at endpoint `target` (null: the checks that
// need an endpoint are skipped).
struct RemoteAccess {
  uint64_t key = 0;
  uint64_t addr = 0;
  size_t len = 0;
  uint64_t access = 0;  // FI_REMOTE_READ and/or FI_REMOTE_WRITE
  const UtilEndpoint* target = nullptr;
  // A region bound to another endpoint (FI_MR_ENDPOINT) is fine: the
  // target is a peer provider's endpoint serving the region's owner.
  bool bound_elsewhere_ok = false;
};

// The local memory a remote access reaches.
struct RemoteRegion {
  std::vector<iovec> pieces;  // of the region, in order
  fi_hmem_iface iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
  UtilCntr* cntr = nullptr;  // bound to count remote writes, or null
};

// Checks `request` against the domain's regions: FI_EACCES status for an
// unknown key, a range outside the region, an access the region does not
// allow, a region whose authorization key is not the target endpoint's
// (the key its peers proved when they connected), or, with FI_MR_ENDPOINT,
// a region not enabled or bound to another endpoint. A peer domain
// (fi_domain2 with FI_PEER) also looks in its owner's regions, where the
// endpoint binding is not checked: the peer's endpoint serves the owner's.
absl::StatusOr<RemoteRegion> MrResolveRemote(UtilDomain* domain,
                                             const RemoteAccess& request);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_MR_H_

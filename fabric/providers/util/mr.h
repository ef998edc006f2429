// File: fabric/providers/util/mr.h
//
// Memory regions shared by all providers (fi_mr(3)): fi_mr_reg, regv and
// regattr (with the HMEM iface and device), keys (random and unguessable
// with FI_MR_PROV_KEY, the application's otherwise, unique per domain),
// fi_mr_bind to a counter, fi_mr_enable, fi_mr_refresh, and asynchronous
// completion (FI_MR_COMPLETE on the EQ bound to the domain with FI_REG_MR).
// Providers check every remote access with MrResolveRemote.
#ifndef FABRIC_PROVIDERS_UTIL_MR_H_
#define FABRIC_PROVIDERS_UTIL_MR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <sys/uio.h>

#include <vector>

#include "absl/status/statusor.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/domain.h"

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
};

// fi_ops_mr of UtilDomain.
extern fi_ops_mr kUtilMrOps;

// The local memory behind a remote access of `len` bytes at `addr` with
// `key`, arriving at endpoint `target` (may be null), as pieces of the
// region; FI_EACCES status for an unknown key, a range outside the region,
// an access (FI_REMOTE_READ / FI_REMOTE_WRITE) the region does not allow,
// or, with FI_MR_ENDPOINT, a region not enabled or bound to another
// endpoint. The region's HMEM iface and device come back in *iface and
// *device, and the counter bound to count remote writes in *cntr (null if
// none), when those are not null.
absl::StatusOr<std::vector<iovec>> MrResolveRemote(
    UtilDomain* domain, uint64_t key, uint64_t addr, size_t len,
    uint64_t access, fi_hmem_iface* iface = nullptr,
    uint64_t* device = nullptr, const UtilEndpoint* target = nullptr,
    UtilCntr** cntr = nullptr);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_MR_H_

// File: fabric/api/cxx/mr.h
//
// A memory region (fi_mr(3)) as an owning handle. Regions belong to a domain
// and must be closed before it; the memory must stay valid while the region
// is open.
//
// Example: register a buffer for remote writes and hand out its key.
//
//   std::vector<char> buffer(4096);
//   absl::StatusOr<ofi::Mr> mr = ofi::RegisterMr(
//       *domain, buffer.data(), buffer.size(), FI_REMOTE_WRITE);
//   if (!mr.ok()) return mr.status();
//   uint64_t key = mr->Key();   // for the peer's fi_write
//   void* desc = mr->Desc();    // for local operations on `buffer`
#ifndef FABRIC_API_CXX_MR_H_
#define FABRIC_API_CXX_MR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

class Mr : public Handle<fid_mr> {
 public:
  using Handle::Handle;

  // fi_mr_key: the key peers use to reach the region (chosen by the
  // provider with FI_MR_PROV_KEY, the requested key otherwise);
  // FI_KEY_NOTAVAIL until an asynchronous registration completes.
  uint64_t Key() const;

  // fi_mr_desc: the local descriptor for data transfers on the region.
  void* Desc() const;
};

// fi_mr_reg of `len` bytes at `buf` for `access` (FI_SEND, FI_REMOTE_WRITE,
// ...) with offset 0 and no flags. `requested_key` is used unless the
// domain's mr_mode has FI_MR_PROV_KEY.
absl::StatusOr<Mr> RegisterMr(const Domain& domain, const void* buf,
                              size_t len, uint64_t access,
                              uint64_t requested_key = 0,
                              void* context = nullptr);

// fi_mr_regattr: any region fi_mr_attr describes (several iovs, an offset,
// HMEM memory).
absl::StatusOr<Mr> RegisterMr(const Domain& domain, const fi_mr_attr& attr,
                              uint64_t flags = 0);

}  // namespace ofi

#endif  // FABRIC_API_CXX_MR_H_

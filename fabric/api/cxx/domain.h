// File: fabric/api/cxx/domain.h
//
// The domain of a fabric (fi_domain(3)) as an owning handle. CQs, counters
// and memory regions are opened on it (cq.h, cntr.h, mr.h); it must be
// closed before its fabric and after them.
//
// Example: open the domain of an entry returned by GetInfo.
//
//   absl::StatusOr<ofi::Info> info = ofi::GetInfo(hints.get());
//   absl::StatusOr<ofi::Fabric> fabric = ofi::OpenFabric(*(*info)->fabric_attr);
//   absl::StatusOr<ofi::Domain> domain = ofi::OpenDomain(*fabric, **info);
//   if (!domain.ok()) return domain.status();
#ifndef FABRIC_API_CXX_DOMAIN_H_
#define FABRIC_API_CXX_DOMAIN_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

using Domain = Handle<fid_domain>;

// fi_domain2 (fi_domain when `flags` is 0) on `fabric` for `info`, an entry
// returned by GetInfo for that fabric. Unsupported flags keep their fi_errno:
// FI_PEER is FI_EINVAL on providers without peer domains.
absl::StatusOr<Domain> OpenDomain(const Fabric& fabric, fi_info& info,
                                  uint64_t flags = 0, void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_DOMAIN_H_

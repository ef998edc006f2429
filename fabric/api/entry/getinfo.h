// File: fabric/api/entry/getinfo.h
//
// fi_getinfo(3) in C++: the rules of the man page that do not depend on a
// provider (version, flags, node/service forms, instance hints, ordering,
// explanations when nothing matches), applied over the enabled providers.
#ifndef FABRIC_API_ENTRY_GETINFO_H_
#define FABRIC_API_ENTRY_GETINFO_H_

#include <rdma/fabric.h>

#include "absl/status/statusor.h"
#include "fabric/api/core/info.h"

namespace fabric {

// The library's API version, FI_VERSION(1, 18).
inline constexpr uint32_t kApiVersion =
    FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);

// Checks an application's requested API version: FI_ENOSYS when it is not
// 1.x with x <= our minor.
absl::Status CheckVersion(uint32_t version);

absl::StatusOr<InfoList> GetInfo(uint32_t version, const char* node,
                                 const char* service, uint64_t flags,
                                 const fi_info* hints);

}  // namespace fabric

#endif  // FABRIC_API_ENTRY_GETINFO_H_

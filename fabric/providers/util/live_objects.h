// File: fabric/providers/util/live_objects.h
//
// Every fabric-level object the library hands out (fabrics, domains, passive
// endpoints) is listed here while it is open, in the order it was opened. The
// core uses the list to check pointers that applications pass back in hints
// (fabric_attr->fabric, domain_attr->domain, handle) without dereferencing
// anything that is not ours, and to point fi_getinfo results at the first
// opened instance of a fabric or domain.
#ifndef FABRIC_PROVIDERS_UTIL_LIVE_OBJECTS_H_
#define FABRIC_PROVIDERS_UTIL_LIVE_OBJECTS_H_

#include <rdma/fabric.h>

#include <string>

#include "absl/strings/string_view.h"

namespace fabric {

// Lists `object` (of class object->fclass) as open under `provider`/`name`,
// on `parent` (a domain's fabric; null for a fabric).
void AddLiveObject(fid* object, absl::string_view provider,
                   absl::string_view name, fid* parent = nullptr);
void RemoveLiveObject(fid* object);

// True when `object` is open and of class `fclass`. Never dereferences it.
bool IsLiveObject(const void* object, size_t fclass);

// The provider and object names `object` was opened with (empty if unknown).
std::string LiveObjectProvider(const void* object);
std::string LiveObjectName(const void* object);

// The object `object` was opened on (null if none or unknown).
fid* LiveObjectParent(const void* object);

// The first opened object of `fclass` with this provider and name (and
// parent, unless `parent` is null), or null.
fid* FirstLiveObject(size_t fclass, absl::string_view provider,
                     absl::string_view name, const fid* parent = nullptr);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_LIVE_OBJECTS_H_

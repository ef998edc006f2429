// File: fabric/providers/domain_resources.h
//
// What a provider keeps for one of its domains beside the state every
// domain shares (util/domain.h): a device's context and protection domain.
// Made by Provider::OpenDomainResources when the domain opens, destroyed
// with it, after every object opened on it is closed.
#ifndef FABRIC_PROVIDERS_DOMAIN_RESOURCES_H_
#define FABRIC_PROVIDERS_DOMAIN_RESOURCES_H_

#include <stdint.h>

#include "absl/status/statusor.h"

namespace fabric {

struct UtilMr;

class DomainResources {
 public:
  virtual ~DomainResources() = default;
  // fi_mr_reg of `mr` (its iov and access filled in): registers the memory
  // with the device, sets mr->device_region and mr->mr_fid.mem_desc, and
  // returns the device's remote key: the key peers name the region by
  // (FI_MR_PROV_KEY) when its access allows them in; the caller gives a
  // region without remote access a key of its own.
  virtual absl::StatusOr<uint64_t> RegisterRegion(UtilMr* mr) = 0;
  // Undoes RegisterRegion when the region is closed.
  virtual void DeregisterRegion(UtilMr* mr) = 0;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_DOMAIN_RESOURCES_H_

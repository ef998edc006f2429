// File: fabric/providers/util/ip_provider.h
//
// The part of a provider that every IP-addressed provider (tcp, udp) shares:
// discovery over the machine's interfaces, the FI_<PROV>_IFACE parameter, and
// the fabric object. A concrete provider supplies its endpoint templates and
// which settings it supports.
#ifndef FABRIC_PROVIDERS_UTIL_IP_PROVIDER_H_
#define FABRIC_PROVIDERS_UTIL_IP_PROVIDER_H_

#include <vector>

#include "fabric/api/core/hints.h"
#include "fabric/providers/provider.h"

namespace fabric {

class IpProvider : public Provider {
 public:
  IpProvider(const char* name, uint32_t version);

  // Attributes of each endpoint type offered, best first; names, addresses and
  // provider fields are filled in per interface by Discover.
  virtual std::vector<const fi_info*> Templates() const = 0;

  InfoPtr DefaultInfo() const override;
  absl::StatusOr<InfoList> Discover(
      const GetInfoRequest& request) const override;
  int OpenFabric(const fi_fabric_attr& attr, fid_fabric** fabric,
                 void* context) const override;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_IP_PROVIDER_H_

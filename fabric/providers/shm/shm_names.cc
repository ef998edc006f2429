#include "fabric/providers/shm/shm_names.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace fabric {
namespace shm {
namespace {

std::string Suffix(const IpAddress& address) {
  return absl::StrCat(geteuid(), "-", address.HostString(), "-",
                      address.port());
}

}  // namespace

std::string EndpointSegmentName(const IpAddress& address) {
  return absl::StrCat(kEndpointSegmentPrefix, "-", Suffix(address));
}

std::string DoorbellName(const IpAddress& address) {
  return absl::StrCat("fabric-shm-", Suffix(address));
}

}  // namespace shm
}  // namespace fabric

#include "fabric/providers/shm/shm_names.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace fabric {
namespace shm {
namespace {

std::string Suffix(const IpAddress& address, std::string_view scope) {
  return absl::StrCat(geteuid(), scope.empty() ? "" : "-", std::string(scope),
                      "-", address.HostString(), "-", address.port());
}

}  // namespace

std::string EndpointSegmentName(const IpAddress& address,
                                std::string_view scope) {
  return absl::StrCat(kEndpointSegmentPrefix, "-", Suffix(address, scope));
}

std::string DoorbellName(const IpAddress& address, std::string_view scope) {
  return absl::StrCat("fabric-shm-", Suffix(address, scope));
}

}  // namespace shm
}  // namespace fabric

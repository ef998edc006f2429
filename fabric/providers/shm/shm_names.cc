#include "fabric/providers/shm/shm_names.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "fabric/providers/shm/shm_process.h"

namespace fabric {
namespace shm {
namespace {

std::string Suffix(const IpAddress& address, std::string_view scope) {
  return absl::StrCat(scope.empty() ? "" : "-", std::string(scope), "-",
                      address.HostString(), "-", address.port());
}

}  // namespace

std::string EndpointSegmentName(const IpAddress& address,
                                std::string_view scope) {
  // Read each time: a process may move to another namespace (unshare).
  absl::StatusOr<uint64_t> netns = OwnNetworkNamespace();
  return absl::StrCat(kEndpointSegmentPrefix, "-", geteuid(), "-",
                      netns.ok() ? *netns : 0, Suffix(address, scope));
}

std::string DoorbellName(const IpAddress& address, std::string_view scope) {
  return absl::StrCat("fabric-shm-", geteuid(), Suffix(address, scope));
}

}  // namespace shm
}  // namespace fabric

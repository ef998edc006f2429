#include "fabric/api/cxx/endpoint.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

namespace ofi {

absl::StatusOr<Endpoint> OpenEndpoint(const Domain& domain, fi_info& info,
                                      void* context) {
  fid_ep* ep = nullptr;
  int rc = fi_endpoint(domain.get(), &info, &ep, context);
  if (rc != 0) return ErrorStatus(rc, "fi_endpoint");
  return Endpoint(ep);
}

absl::Status Bind(const Endpoint& ep, fid* object, uint64_t flags) {
  return ErrorStatus(fi_ep_bind(ep.get(), object, flags), "fi_ep_bind");
}

absl::Status Enable(const Endpoint& ep) {
  return ErrorStatus(fi_enable(ep.get()), "fi_enable");
}

absl::StatusOr<std::vector<char>> GetName(const Endpoint& ep) {
  // Room for any IP address; a longer name (-FI_ETOOSMALL) says its length.
  std::vector<char> name(64);
  size_t length = name.size();
  int rc = fi_getname(&ep.get()->fid, name.data(), &length);
  if (rc == -FI_ETOOSMALL) {
    name.resize(length);
    rc = fi_getname(&ep.get()->fid, name.data(), &length);
  }
  if (rc != 0) return ErrorStatus(rc, "fi_getname");
  name.resize(length);
  return name;
}

absl::StatusOr<Endpoint> OpenEnabledEndpoint(
    const Domain& domain, fi_info& info,
    std::initializer_list<Binding> bindings, void* context) {
  absl::StatusOr<Endpoint> ep = OpenEndpoint(domain, info, context);
  if (!ep.ok()) return ep.status();
  for (const Binding& binding : bindings) {
    absl::Status bound = Bind(*ep, binding.object, binding.flags);
    if (!bound.ok()) return bound;
  }
  absl::Status enabled = Enable(*ep);
  if (!enabled.ok()) return enabled;
  return ep;
}

}  // namespace ofi

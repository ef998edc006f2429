#include "fabric/api/cxx/loopback_testing.h"

#include <string.h>

#include <utility>

namespace ofi::testing {

absl::StatusOr<Loopback> OpenLoopback(int mr_mode, fi_ep_type type) {
  Info hints = AllocInfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  hints->domain_attr->mr_mode = mr_mode;
  hints->ep_attr->type = type;
  absl::StatusOr<Info> info = GetInfo(hints.get());
  if (!info.ok()) return info.status();
  absl::StatusOr<Fabric> fabric = OpenFabric(*(*info)->fabric_attr);
  if (!fabric.ok()) return fabric.status();
  absl::StatusOr<Domain> domain = OpenDomain(*fabric, **info);
  if (!domain.ok()) return domain.status();
  return Loopback{*std::move(info), *std::move(fabric), *std::move(domain)};
}

}  // namespace ofi::testing

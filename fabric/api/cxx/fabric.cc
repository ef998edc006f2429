#include "fabric/api/cxx/fabric.h"

#include <rdma/fi_errno.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace ofi {
absl::Status ErrorStatus(int rc, const char* call) {
  if (rc >= 0) return absl::OkStatus();
  return fabric::FiError(
      -rc, absl::StrCat(call, ": ", fi_strerror(-rc), " (", rc, ")"));
}

int FiErrno(const absl::Status& status) { return -fabric::ToFiErrno(status); }

Info AllocInfo() { return Info(fi_allocinfo()); }

Info DupInfo(const fi_info& info) { return Info(fi_dupinfo(&info)); }

absl::StatusOr<Info> GetInfo(const fi_info* hints,
                             const GetInfoOptions& options) {
  fi_info* list = nullptr;
  int rc = fi_getinfo(options.version, options.node, options.service,
                      options.flags, hints, &list);
  if (rc != 0) return ErrorStatus(rc, "fi_getinfo");
  return Info(list);
}

absl::StatusOr<Fabric> OpenFabric(const fi_fabric_attr& attr, void* context) {
  fi_fabric_attr copy = attr;
  fid_fabric* fabric = nullptr;
  int rc = fi_fabric(&copy, &fabric, context);
  if (rc != 0) return ErrorStatus(rc, "fi_fabric");
  return Fabric(fabric);
}

}  // namespace ofi

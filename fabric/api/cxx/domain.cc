#include "fabric/api/cxx/domain.h"

namespace ofi {

absl::StatusOr<Domain> OpenDomain(const Fabric& fabric, fi_info& info,
                                  uint64_t flags, void* context) {
  fid_domain* domain = nullptr;
  int rc = fi_domain2(fabric.get(), &info, &domain, flags, context);
  if (rc != 0) return ErrorStatus(rc, "fi_domain2");
  return Domain(domain);
}

}  // namespace ofi

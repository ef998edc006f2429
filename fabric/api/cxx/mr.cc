#include "fabric/api/cxx/mr.h"

namespace ofi {

uint64_t Mr::Key() const { return fi_mr_key(get()); }

void* Mr::Desc() const { return fi_mr_desc(get()); }

absl::StatusOr<Mr> RegisterMr(const Domain& domain, const void* buf,
                              size_t len, uint64_t access,
                              uint64_t requested_key, void* context) {
  fid_mr* mr = nullptr;
  int rc = fi_mr_reg(domain.get(), buf, len, access, /*offset=*/0,
                     requested_key, /*flags=*/0, &mr, context);
  if (rc != 0) return ErrorStatus(rc, "fi_mr_reg");
  return Mr(mr);
}

absl::StatusOr<Mr> RegisterMr(const Domain& domain, const fi_mr_attr& attr,
                              uint64_t flags) {
  fid_mr* mr = nullptr;
  int rc = fi_mr_regattr(domain.get(), &attr, flags, &mr);
  if (rc != 0) return ErrorStatus(rc, "fi_mr_regattr");
  return Mr(mr);
}

}  // namespace ofi

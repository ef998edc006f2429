#include "fabric/api/cxx/cntr.h"

namespace ofi {

uint64_t Cntr::Value() const { return fi_cntr_read(get()); }

uint64_t Cntr::Errors() const { return fi_cntr_readerr(get()); }

absl::Status Cntr::Add(uint64_t value) {
  return ErrorStatus(fi_cntr_add(get(), value), "fi_cntr_add");
}

absl::Status Cntr::Set(uint64_t value) {
  return ErrorStatus(fi_cntr_set(get(), value), "fi_cntr_set");
}

absl::Status Cntr::Wait(uint64_t threshold, int timeout_ms) {
  return ErrorStatus(fi_cntr_wait(get(), threshold, timeout_ms),
                     "fi_cntr_wait");
}

absl::StatusOr<Cntr> OpenCntr(const Domain& domain, const fi_cntr_attr* attr,
                              void* context) {
  fi_cntr_attr copy = attr != nullptr ? *attr : fi_cntr_attr{};
  fid_cntr* cntr = nullptr;
  int rc = fi_cntr_open(domain.get(), attr != nullptr ? &copy : nullptr,
                        &cntr, context);
  if (rc != 0) return ErrorStatus(rc, "fi_cntr_open");
  return Cntr(cntr);
}

}  // namespace ofi

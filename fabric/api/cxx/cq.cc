#include "fabric/api/cxx/cq.h"

#include <rdma/fi_errno.h>

#include "fabric/api/core/status.h"
#include "fabric/api/cxx/err_data.h"

namespace ofi {

absl::StatusOr<size_t> Cq::ReadEntries(void* buf, size_t count,
                                       fi_cq_format format) {
  if (format != format_) {
    return fabric::FiError(FI_EINVAL,
                           "Cq::Read: the entry type is not the CQ's format");
  }
  ssize_t rc = fi_cq_read(get(), buf, count);
  if (rc == -FI_EAGAIN) return 0;
  if (rc < 0) return ErrorStatus(static_cast<int>(rc), "fi_cq_read");
  return static_cast<size_t>(rc);
}

absl::StatusOr<CqError> Cq::ReadError() {
  CqError error;
  ssize_t rc = fi_cq_readerr(get(), &error.entry, 0);
  if (rc < 0) return ErrorStatus(static_cast<int>(rc), "fi_cq_readerr");
  error.err_data = TakeErrData(error.entry);
  return error;
}

absl::StatusOr<Cq> OpenCq(const Domain& domain, const fi_cq_attr& attr,
                          void* context) {
  fi_cq_attr copy = attr;
  if (copy.format == FI_CQ_FORMAT_UNSPEC) copy.format = FI_CQ_FORMAT_CONTEXT;
  fid_cq* cq = nullptr;
  int rc = fi_cq_open(domain.get(), &copy, &cq, context);
  if (rc != 0) return ErrorStatus(rc, "fi_cq_open");
  return Cq(cq, copy.format);
}

}  // namespace ofi

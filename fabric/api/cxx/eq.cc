#include "fabric/api/cxx/eq.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "fabric/api/cxx/err_data.h"

namespace ofi {

fi_eq_entry EqEvent::Entry() const {
  fi_eq_entry entry = {};
  if (!data.empty()) {
    memcpy(&entry, data.data(), std::min(data.size(), sizeof(entry)));
  }
  return entry;
}

absl::StatusOr<std::optional<EqEvent>> Eq::Read() {
  alignas(fi_eq_cm_entry) uint8_t buf[kMaxEventSize];
  EqEvent event;
  ssize_t rc = fi_eq_read(get(), &event.event, buf, sizeof(buf), 0);
  if (rc == -FI_EAGAIN) return std::nullopt;
  if (rc < 0) return ErrorStatus(static_cast<int>(rc), "fi_eq_read");
  event.data.assign(buf, buf + rc);
  return event;
}

absl::StatusOr<EqError> Eq::ReadError() {
  EqError error;
  ssize_t rc = fi_eq_readerr(get(), &error.entry, 0);
  if (rc < 0) return ErrorStatus(static_cast<int>(rc), "fi_eq_readerr");
  error.err_data = TakeErrData(error.entry);
  return error;
}

absl::Status Eq::Write(uint32_t event, const fi_eq_entry& entry) {
  ssize_t rc = fi_eq_write(get(), event, &entry, sizeof(entry), 0);
  return ErrorStatus(static_cast<int>(rc), "fi_eq_write");
}

absl::StatusOr<Eq> OpenEq(const Fabric& fabric, const fi_eq_attr& attr,
                          void* context) {
  fi_eq_attr copy = attr;
  fid_eq* eq = nullptr;
  int rc = fi_eq_open(fabric.get(), &copy, &eq, context);
  if (rc != 0) return ErrorStatus(rc, "fi_eq_open");
  return Eq(eq);
}

}  // namespace ofi

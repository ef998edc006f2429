// File: fabric/api/cxx/eq.h
//
// An event queue (fi_eq(3)) as an owning handle with typed reads. EQs belong
// to a fabric and must be closed before it (and after the objects bound to
// them).
//
// Example: a writable EQ, one event written and read back.
//
//   fi_eq_attr attr = {};
//   attr.flags = FI_WRITE;
//   absl::StatusOr<ofi::Eq> eq = ofi::OpenEq(*fabric, attr);
//   if (!eq.ok()) return eq.status();
//   fi_eq_entry entry = {};
//   entry.data = 42;
//   if (absl::Status s = eq->Write(FI_NOTIFY, entry); !s.ok()) return s;
//
//   absl::StatusOr<std::optional<ofi::EqEvent>> event = eq->Read();
//   if (ofi::FiErrno(event.status()) == FI_EAVAIL) {
//     absl::StatusOr<ofi::EqError> error = eq->ReadError();  // error->entry.err
//   } else if (!event.ok()) {
//     return event.status();
//   } else if (!event->has_value()) {
//     // nothing waits
//   } else if ((*event)->event == FI_NOTIFY) {
//     uint64_t data = (*event)->Entry().data;  // 42
//   }
#ifndef FABRIC_API_CXX_EQ_H_
#define FABRIC_API_CXX_EQ_H_

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

// One event read from an EQ: its code and the bytes of its entry.
struct EqEvent {
  uint32_t event = 0;         // FI_NOTIFY, FI_MR_COMPLETE, FI_CONNREQ, ...
  std::vector<uint8_t> data;  // an fi_eq_entry, or fi_eq_cm_entry for CM events

  // The entry as an fi_eq_entry (the format of all but the CM events), zero
  // past the bytes read.
  fi_eq_entry Entry() const;
};

// One error entry read from an EQ. entry.err_data is cleared (the provider's
// buffer is only valid until the next read); its bytes are in err_data.
struct EqError {
  fi_eq_err_entry entry = {};
  std::vector<uint8_t> err_data;
};

class Eq : public Handle<fid_eq> {
 public:
  // Events up to this size are read; a larger one gives FI_ETOOSMALL.
  static constexpr size_t kMaxEventSize = 4096;

  using Handle::Handle;

  // fi_eq_read: the next event, or nullopt when none waits (-FI_EAGAIN). A
  // status with FiErrno FI_EAVAIL when an error entry is next: take it with
  // ReadError.
  absl::StatusOr<std::optional<EqEvent>> Read();

  // fi_eq_readerr: the error entry next in the queue; FI_EAGAIN when there
  // is none.
  absl::StatusOr<EqError> ReadError();

  // fi_eq_write of an fi_eq_entry; the EQ must be opened with FI_WRITE.
  absl::Status Write(uint32_t event, const fi_eq_entry& entry);
};

// fi_eq_open on `fabric`.
absl::StatusOr<Eq> OpenEq(const Fabric& fabric, const fi_eq_attr& attr,
                          void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_EQ_H_

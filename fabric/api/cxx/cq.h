// File: fabric/api/cxx/cq.h
//
// A completion queue (fi_cq(3)) as an owning handle with typed reads. CQs
// belong to a domain and must be closed before it (and after the endpoints
// bound to them).
//
// Example: open a CQ of fi_cq_data_entry and poll it once.
//
//   fi_cq_attr attr = {};
//   attr.format = FI_CQ_FORMAT_DATA;
//   absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(*domain, attr);
//   if (!cq.ok()) return cq.status();
//
//   std::vector<fi_cq_data_entry> entries(16);
//   absl::StatusOr<size_t> n = cq->Read(absl::MakeSpan(entries));
//   if (ofi::FiErrno(n.status()) == FI_EAVAIL) {
//     absl::StatusOr<ofi::CqError> error = cq->ReadError();  // error->entry.err
//   } else if (!n.ok()) {
//     return n.status();
//   }
//   // entries[0, *n) are completions; *n is 0 when none waited.
#ifndef FABRIC_API_CXX_CQ_H_
#define FABRIC_API_CXX_CQ_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

// The CQ format whose entries are the pointed-to type; other types do not
// compile.
constexpr fi_cq_format CqFormatOf(const fi_cq_entry*) {
  return FI_CQ_FORMAT_CONTEXT;
}
constexpr fi_cq_format CqFormatOf(const fi_cq_msg_entry*) {
  return FI_CQ_FORMAT_MSG;
}
constexpr fi_cq_format CqFormatOf(const fi_cq_data_entry*) {
  return FI_CQ_FORMAT_DATA;
}
constexpr fi_cq_format CqFormatOf(const fi_cq_tagged_entry*) {
  return FI_CQ_FORMAT_TAGGED;
}

// One error entry read from a CQ. entry.err_data is cleared (the provider's
// buffer is only valid until the next read); its bytes are in err_data.
struct CqError {
  fi_cq_err_entry entry = {};
  std::vector<uint8_t> err_data;
};

class Cq : public Handle<fid_cq> {
 public:
  Cq() = default;
  // Owns `cq`, opened with `format`.
  Cq(fid_cq* cq, fi_cq_format format) : Handle(cq), format_(format) {}

  // fi_cq_read of up to entries.size() completions: how many were read, 0
  // when none waits (-FI_EAGAIN). A status with FiErrno FI_EAVAIL when an
  // error entry is next (take it with ReadError), FI_EINVAL when Entry is not
  // the entry type of the CQ's format.
  template <typename Entry>
  absl::StatusOr<size_t> Read(absl::Span<Entry> entries) {
    return ReadEntries(entries.data(), entries.size(),
                       CqFormatOf(entries.data()));
  }

  // fi_cq_readerr: the error entry next in the queue; FI_EAGAIN when there
  // is none.
  absl::StatusOr<CqError> ReadError();

 private:
  absl::StatusOr<size_t> ReadEntries(void* buf, size_t count,
                                     fi_cq_format format);

  fi_cq_format format_ = FI_CQ_FORMAT_UNSPEC;
};

// fi_cq_open on `domain`. FI_CQ_FORMAT_UNSPEC opens FI_CQ_FORMAT_CONTEXT, so
// entries are fi_cq_entry.
absl::StatusOr<Cq> OpenCq(const Domain& domain, const fi_cq_attr& attr,
                          void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_CQ_H_

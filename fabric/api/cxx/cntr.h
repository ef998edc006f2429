// File: fabric/api/cxx/cntr.h
//
// A counter (fi_cntr(3)) as an owning handle: a success count and an error
// count. Counters belong to a domain and must be closed before it (and after
// the endpoints and memory regions bound to them).
//
// Example: a counter with a wait object, waited on.
//
//   fi_cntr_attr attr = {};
//   attr.wait_obj = FI_WAIT_UNSPEC;
//   absl::StatusOr<ofi::Cntr> cntr = ofi::OpenCntr(*domain, &attr);
//   if (!cntr.ok()) return cntr.status();
//   ...  // operations counted on it
//   absl::Status done = cntr->Wait(/*threshold=*/8, /*timeout_ms=*/1000);
//   if (ofi::FiErrno(done) == FI_EAVAIL) {
//     uint64_t failed = cntr->Errors();
//   } else if (ofi::FiErrno(done) == FI_ETIMEDOUT) {
//     uint64_t so_far = cntr->Value();
//   }
#ifndef FABRIC_API_CXX_CNTR_H_
#define FABRIC_API_CXX_CNTR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

class Cntr : public Handle<fid_cntr> {
 public:
  using Handle::Handle;

  // fi_cntr_read: the success count.
  uint64_t Value() const;

  // fi_cntr_readerr: the error count.
  uint64_t Errors() const;

  // fi_cntr_add: adds `value` to the success count.
  absl::Status Add(uint64_t value);

  // fi_cntr_set: sets the success count.
  absl::Status Set(uint64_t value);

  // fi_cntr_wait: OK once Value() >= threshold; FI_ETIMEDOUT after
  // `timeout_ms` (negative: no limit), FI_EAVAIL when the error count
  // changes first, FI_EINVAL on a counter opened with FI_WAIT_NONE.
  absl::Status Wait(uint64_t threshold, int timeout_ms);
};

// fi_cntr_open on `domain`. A null `attr` opens the defaults, which have no
// wait object (FI_WAIT_NONE): pass one with FI_WAIT_UNSPEC to Wait.
absl::StatusOr<Cntr> OpenCntr(const Domain& domain,
                              const fi_cntr_attr* attr = nullptr,
                              void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_CNTR_H_

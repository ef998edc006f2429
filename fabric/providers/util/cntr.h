// File: fabric/providers/util/cntr.h
//
// The counter shared by all providers (fi_cntr(3)): a success count and an
// error count, fi_cntr_read/readerr/add/set/adderr/seterr, and fi_cntr_wait
// for a threshold with a timeout. Providers count completions with CntrAdd
// and CntrAddError.
#ifndef FABRIC_PROVIDERS_UTIL_CNTR_H_
#define FABRIC_PROVIDERS_UTIL_CNTR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/wait_object.h"

namespace fabric {

// An open counter. Endpoints and MRs bound to it count in open_children.
struct UtilCntr {
  fid_cntr cntr_fid;  // first: the application's fid_cntr* is this
  UtilDomain* domain;
  std::unique_ptr<WaitObject> wait;
  uint64_t value ABSL_GUARDED_BY(wait->mutex()) = 0;
  uint64_t errors ABSL_GUARDED_BY(wait->mutex()) = 0;
  std::atomic<int> open_children{0};
};
FABRIC_BEGINS_WITH(UtilCntr, cntr_fid);

// The UtilCntr behind `object`, or null when it is not one of our counters.
UtilCntr* AsUtilCntr(fid* object);

// fi_ops_domain::cntr_open of UtilDomain.
int OpenUtilCntr(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** cntr,
                 void* context);

void CntrAdd(UtilCntr* cntr, uint64_t value);
void CntrAddError(UtilCntr* cntr, uint64_t value);

// fi_trywait for a counter: clears its wait object's signal; 0, -FI_EAGAIN
// when input in shared memory would not wake its fd, or -FI_EINVAL when
// `object` is not one of our counters.
int CntrTryWait(fid* object);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_CNTR_H_

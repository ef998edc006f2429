// File: fabric/providers/util/wait_set.h
//
// Wait sets (fi_wait_open, fi_wait): one wait object for several EQs, CQs
// and counters opened with FI_WAIT_SET. Any member's signal wakes fi_wait,
// which returns 0 and re-arms the set; the application then reads its
// members (use fi_trywait before blocking, as fi_eq(3) describes). While it
// blocks, fi_wait advances its members' progress engines.
#ifndef FABRIC_PROVIDERS_UTIL_WAIT_SET_H_
#define FABRIC_PROVIDERS_UTIL_WAIT_SET_H_

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <memory>

#include "absl/status/statusor.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/wait_object.h"

namespace fabric {

struct UtilWaitSet {
  fid_wait wait_fid;  // first: the application's fid_wait* is this
  UtilFabric* fabric;
  WaitSetState state;
};
FABRIC_BEGINS_WITH(UtilWaitSet, wait_fid);

// fi_ops_fabric::wait_open of UtilFabric.
int OpenUtilWaitSet(fid_fabric* fabric, fi_wait_attr* attr,
                    fid_wait** waitset);

// The wait object of an EQ, CQ or counter opened on `fabric` with
// `kind`; for FI_WAIT_SET, `set` must be one of that fabric's wait sets.
// `engine` advances the owner's sources (its domain's, or the fabric's).
absl::StatusOr<std::unique_ptr<WaitObject>> CreateWaitObject(
    int kind, fid_wait* set, const UtilFabric& fabric, ProgressEngine* engine);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_WAIT_SET_H_

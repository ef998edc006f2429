// File: fabric/providers/util/av_set.h
//
// AV sets (fi_av_set(3)): ordered subsets of the fi_addr_t of one AV, built
// from fi_av_set_attr (all of the AV with FI_UNIVERSE, or the addresses
// start_addr + i * stride up to end_addr of an FI_AV_TABLE, skipping removed
// ones) and changed with union, intersect, diff, insert and remove. A range
// needs both ends to be addresses of the AV and a stride of at least 1;
// without one, start_addr and end_addr are FI_ADDR_NOTAVAIL and stride 0.
// FI_UNIVERSE takes no range; attr->count is only a hint. Every
// member must be an address in the AV; sets of different AVs do not mix
// (-FI_EINVAL). Communication keys need a fabric manager, which we do not
// have: a set with comm_key gets -FI_ENOSYS. fi_av_set_addr hands out an
// address naming the set, usable only with collective operations, which
// are not implemented (fi_query_collective is -FI_ENOSYS, and there are no
// endpoints to run them). An open set counts in its AV's open_children, so
// fi_close(av) is -FI_EBUSY meanwhile.
#ifndef FABRIC_PROVIDERS_UTIL_AV_SET_H_
#define FABRIC_PROVIDERS_UTIL_AV_SET_H_

#include <rdma/fabric.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_ext.h>

#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {

struct UtilAvSet {
  fid_av_set set_fid;  // first: the application's fid_av_set* is this
  UtilAv* av;
  Mutex mutex;
  // In set order, no duplicates.
  std::vector<fi_addr_t> members ABSL_GUARDED_BY(mutex);
  fid_peer_av_set owner_fid;  // what a peer provider imports (peer_av.h)
};
FABRIC_BEGINS_WITH(UtilAvSet, set_fid);

// fi_ops_av::av_set of UtilAv.
int OpenUtilAvSet(fid_av* av, fi_av_set_attr* attr, fid_av_set** set,
                  void* context);

// The UtilAvSet behind `set`, or null when it is not one of our AV sets.
UtilAvSet* AsUtilAvSet(const fid_av_set* set);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_AV_SET_H_

// File: fabric/providers/util/poll_set.h
//
// Poll sets (fi_poll(3)): fi_poll_open on a domain, fi_poll_add/fi_poll_del
// of its CQs and counters, and fi_poll, which reports the context of every
// member with something new: a CQ with entries, a counter whose success or
// error count changed since the previous fi_poll. A member is held by the
// set (fi_close on it is -FI_EBUSY) until it is removed or the set closes.
#ifndef FABRIC_PROVIDERS_UTIL_POLL_SET_H_
#define FABRIC_PROVIDERS_UTIL_POLL_SET_H_

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

namespace fabric {

// fi_ops_domain::poll_open of UtilDomain.
int OpenUtilPollSet(fid_domain* domain, fi_poll_attr* attr,
                    fid_poll** pollset);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_POLL_SET_H_

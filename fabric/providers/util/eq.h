// File: fabric/providers/util/eq.h
//
// The event queue shared by all providers (fi_eq(3)): fi_eq_read, readerr,
// write, sread with a timeout, strerror, and the wait objects of
// wait_object.h. Entries keep their order; an error entry at the head makes
// fi_eq_read return -FI_EAVAIL until fi_eq_readerr takes it. Providers post
// connection-management and MR/AV completion events with EqPost/EqPostError.
#ifndef FABRIC_PROVIDERS_UTIL_EQ_H_
#define FABRIC_PROVIDERS_UTIL_EQ_H_

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <sys/types.h>

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/wait_object.h"

namespace fabric {

// One queued event or error.
struct EqEntry {
  uint32_t event = 0;
  std::vector<char> data;  // the event's entry, or the error's err_data
  bool is_error = false;
  fi_eq_err_entry error = {};
};

// An open EQ. Objects bound to it (a domain for FI_REG_MR, endpoints) count
// in open_children, so fi_close returns -FI_EBUSY while they are open.
struct UtilEq {
  fid_eq eq_fid;  // first: the application's fid_eq* is this
  UtilFabric* fabric;
  size_t capacity;
  bool writable;  // opened with FI_WRITE
  std::unique_ptr<WaitObject> wait;
  std::deque<EqEntry> entries ABSL_GUARDED_BY(wait->mutex());
  std::vector<char> last_err_data;  // what readerr last pointed the app at
  std::atomic<int> open_children{0};
  // Opened with FI_PEER: the owner's EQ, which gets every event posted
  // here (peer_eq.h).
  fid_eq* owner = nullptr;
};
FABRIC_BEGINS_WITH(UtilEq, eq_fid);

// The UtilEq behind `object`, or null when it is not one of our EQs.
UtilEq* AsUtilEq(fid* object);

// fi_ops_fabric::eq_open of UtilFabric.
int OpenUtilEq(fid_fabric* fabric, fi_eq_attr* attr, fid_eq** eq,
               void* context);

// Queues an event (the bytes of its fi_eq_entry / fi_eq_cm_entry). Returns
// len, or -FI_EAGAIN when the queue holds attr->size entries.
ssize_t EqPost(fid_eq* eq, uint32_t event, const void* buf, size_t len);

// Queues an error entry; err_data (err_data_size bytes) is copied.
ssize_t EqPostError(fid_eq* eq, const fi_eq_err_entry& entry);

// fi_eq_read of one of our EQs without the progress it runs first (see
// CqReadWithoutProgress): the entry's size, -FI_EAGAIN when empty,
// -FI_EAVAIL at an error entry.
ssize_t EqReadWithoutProgress(fid_eq* eq, uint32_t* event, void* buf,
                              size_t len);

// fi_trywait for one object: -FI_EAGAIN when `object` is one of our EQs
// with entries waiting, 0 when it has none, -FI_EINVAL when it is not ours.
int EqTryWait(fid* object);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_EQ_H_

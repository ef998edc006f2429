// File: fabric/providers/util/cq.h
//
// The completion queue shared by all providers (fi_cq(3)): the four entry
// formats, fi_cq_read/readfrom/readerr, sread/sreadfrom with a timeout and
// the threshold condition, fi_cq_signal, strerror, and the wait objects of
// wait_object.h. Entries keep their order; an error entry at the head makes
// fi_cq_read return -FI_EAVAIL until fi_cq_readerr takes it. Providers post
// completions with CqWrite/CqWriteError; a full CQ refuses them
// (-FI_EAGAIN), so nothing is overwritten. A CQ opened with FI_PEER passes
// them to its owner instead (peer_cq.h). Two shortcuts skip the queue while
// it is empty: an fi_cq_read that runs progress takes the completions its
// own pass writes straight into its buffer, and a CqDirectProducer writes
// its completions there when asked.
#ifndef FABRIC_PROVIDERS_UTIL_CQ_H_
#define FABRIC_PROVIDERS_UTIL_CQ_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_ext.h>
#include <string.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/ring_queue.h"
#include "fabric/providers/util/wait_object.h"

namespace fabric {

// One queued completion, or an error's place in the order. Kept small and
// trivially copyable: a polling loop writes and takes two of them per
// message.
struct CqEntry {
  fi_cq_tagged_entry completion = {};  // the other formats are its prefixes
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  bool is_error = false;  // its details are the oldest CqError
};

// What an error entry reports, queued beside the entries in the same order.
struct CqError {
  fi_cq_err_entry error = {};
  std::vector<char> err_data;
};

class CqDirectProducer;

// An open CQ. Endpoints bound to it count in open_children.
struct UtilCq {
  fid_cq cq_fid;  // first: the application's fid_cq* is this
  UtilDomain* domain;
  fi_cq_format format;
  size_t entry_size;  // of the format
  size_t capacity;
  fi_cq_wait_cond wait_cond;
  std::unique_ptr<WaitObject> wait;
  RingQueue<CqEntry> entries ABSL_GUARDED_BY(wait->mutex());
  // One per error entry.
  RingQueue<CqError> errors ABSL_GUARDED_BY(wait->mutex());
  // entries.size(), stored whenever it changes: what a read of an empty CQ
  // checks instead of taking the lock (a polling loop's common case).
  std::atomic<size_t> size{0};
  bool signaled ABSL_GUARDED_BY(wait->mutex()) = false;  // fi_cq_signal
  // Entries plus the room promised to posted operations (CqReserve) is
  // `committed - taken`, at most capacity. Posting takes no lock (a
  // compare-and-swap on `committed`, or a plain store when the CQ is
  // serialized: CqSerialized); reading entries adds to `taken`, which only
  // readers change, under the lock: a plain store, not a locked
  // instruction on every read.
  std::atomic<size_t> committed{0};
  std::atomic<size_t> taken{0};
  std::vector<char> last_err_data;  // what readerr last pointed the app at
  std::atomic<int> open_children{0};
  // FI_PEER: the owner's CQ, which takes every completion of this one.
  fid_peer_cq* peer = nullptr;
  // The UtilCq behind `peer` when the owner is one of ours (CqFull,
  // CqWrite).
  UtilCq* peer_owner = nullptr;
  // What a peer provider imports to write into this CQ (peer_cq.h), and
  // whether it was handed out (the importer is a producer too).
  fid_peer_cq owner_fid;
  std::atomic<bool> owner_fid_exported{false};
  // CqSetDirect's producer, the bindings (open_children) it holds, and the
  // readers inside its ReadDirect (CqClearDirect waits for them).
  std::atomic<CqDirectProducer*> direct{nullptr};
  std::atomic<int> direct_bindings{0};
  std::atomic<int> direct_readers{0};
  // fi_cq_read calls whose direct read found nothing since the last that
  // ran the progress pass (kDirectProgressInterval).
  std::atomic<uint32_t> direct_empty_reads{0};
  // The application serializes every call on the CQ's domain
  // (AppSerializesDomain), and the CQ is in no wait set: see CqSerialized.
  bool app_serializes = false;
};
FABRIC_BEGINS_WITH(UtilCq, cq_fid);

// While a CQ's direct producer finds nothing, one fi_cq_read in this many
// runs the progress pass (the domain's other work); the others return at
// once (in a domain of manual data progress). A polling loop's empty read
// is then one look at the producer's queue, as a provider without a util
// CQ would make it.
inline constexpr uint32_t kDirectProgressInterval = 64;

// Whether no two threads ever change the CQ's counters at once: the
// application serializes every call on its domain, and the CQ is in no
// wait set (whose fi_wait progresses its domain from another thread).
// The one peer that imports a CQ's owner fid, tcp's local path, opens its
// shm domain with tcp's threading and progress and runs inside the calls
// on tcp's domain: it writes under the same serialization. Then
// `committed` changes with plain stores and direct reads are not counted:
// each locked instruction costs some 20 cycles, several on every message
// (two shm endpoints in one process under FI_THREAD_DOMAIN, 64 B messages,
// 21 alternating runs: 319 -> 297 ns per message).
inline bool CqSerialized(const UtilCq& cq) { return cq.app_serializes; }

// A producer whose completions wait in a queue of its own (a verbs
// endpoint's device CQ) and can be written straight into the reader's
// buffer while it is a CQ's only producer: fi_cq_read then skips the CQ's
// queue, its lock and the progress pass.
class CqDirectProducer {
 public:
  // Called by fi_cq_read/readfrom while `cq` holds no entries: writes up
  // to `count` (>= 1) of its completions for `cq` into `buf` (CqStoreEntry)
  // and `sources` (when not null), oldest first, and returns how many.
  // What it takes that is not for that (another CQ's, an error) it reports
  // as usual, and what follows such a completion into `cq`'s queue goes
  // there too, so that the order holds. 0 when it had nothing: the reader
  // runs the progress pass on one such read in kDirectProgressInterval, so
  // whatever the producer must do while idle (a connection's events) it
  // does here too.
  virtual size_t ReadDirect(UtilCq* cq, void* buf, size_t count,
                            fi_addr_t* sources) = 0;

 protected:
  ~CqDirectProducer() = default;
};

// Makes `producer`, which holds `bindings` of `cq`'s open_children, the
// one fi_cq_read asks first. It is asked only while those are all the
// bindings (another endpoint bound to `cq` turns it off until that one is
// gone), never for a CQ opened with FI_PEER or whose owner fid a peer
// imported. CqClearDirect removes it (if it is still `producer`) and waits
// until no reader of `cq` is inside a direct read: call it before the
// producer goes away, without its locks held.
void CqSetDirect(UtilCq* cq, CqDirectProducer* producer, int bindings);
void CqClearDirect(UtilCq* cq, CqDirectProducer* producer);

// For an owner that reads one CQ for all its internal endpoints from its
// own progress pass (rxm): the fi_control command by which it asks an
// enabled endpoint for its CqDirectProducer (arg: a CqDirectProducer**;
// -FI_ENOSYS from endpoints that have none, -FI_EINVAL for a NULL arg or
// an endpoint not enabled), and the read: up to `count` of that
// producer's completions for `cq` straight into `buf`, 0 while `cq` holds
// entries (they go first: fi_cq_read them) or when it has none. The caller
// keeps the endpoint open during the read. The command is ours, outside
// libfabric's.
inline constexpr int kControlGetCqDirectProducer = 0x46490001;
size_t CqReadDirectFrom(fid_cq* cq, CqDirectProducer* producer, void* buf,
                        size_t count);

// Writes `entry` as the `index`th entry of `buf` in `cq`'s format (each
// format a prefix of the tagged one; a copy of constant size per format
// takes no call).
inline void CqStoreEntry(const UtilCq& cq, const fi_cq_tagged_entry& entry,
                         void* buf, size_t index) {
  char* out = static_cast<char*>(buf) + index * cq.entry_size;
  switch (cq.format) {
    case FI_CQ_FORMAT_CONTEXT:
      memcpy(out, &entry, sizeof(fi_cq_entry));
      return;
    case FI_CQ_FORMAT_MSG:
      memcpy(out, &entry, sizeof(fi_cq_msg_entry));
      return;
    case FI_CQ_FORMAT_DATA:
      memcpy(out, &entry, sizeof(fi_cq_data_entry));
      return;
    default:
      memcpy(out, &entry, sizeof(fi_cq_tagged_entry));
  }
}

// The buffer of an fi_cq_read or fi_cq_readfrom that completions are
// written into straight, past the CQ's queue: `written` of `count` entries
// so far.
struct CqReadBuffer {
  UtilCq* cq;
  void* buf;
  fi_addr_t* sources;  // fi_cq_readfrom's, or null
  size_t count;
  size_t written = 0;

  // Appends `entry` from `source`; written < count.
  void Append(const fi_cq_tagged_entry& entry, fi_addr_t source) {
    CqStoreEntry(*cq, entry, buf, written);
    if (sources != nullptr) sources[written] = source;
    ++written;
  }
};

// The UtilCq behind `object`, or null when it is not one of our CQs.
UtilCq* AsUtilCq(fid* object);

// fi_ops_domain::cq_open of UtilDomain.
int OpenUtilCq(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq,
               void* context);

// Promises room for one entry to an operation being posted, so that its
// completion can never overrun the CQ (resource management): 0, or
// -FI_EAGAIN when entries and promises fill the CQ. CqUnreserve takes back
// a promise whose operation will report nothing.
int CqReserve(UtilCq* cq);
void CqUnreserve(UtilCq* cq);

// Writes `entry` from `source` into `reader`'s buffer (written < count)
// instead of the queue of its CQ; a `reserved` entry's room goes back, as
// the entry is queued and read at once.
inline void CqWriteToReader(CqReadBuffer* reader,
                            const fi_cq_tagged_entry& entry, fi_addr_t source,
                            bool reserved) {
  reader->Append(entry, source);
  if (reserved) CqUnreserve(reader->cq);
}

// Whether `cq` holds `capacity` entries for the application to read (for a
// CQ opened with FI_PEER: its owner's, when the owner is one of ours):
// work that would add an entry nobody reserved should wait until it reads.
// Promises (CqReserve) do not count: waiting on them could wait forever
// for the very completions they stand for.
inline bool CqFull(const UtilCq* cq) {
  if (cq->peer != nullptr) {
    cq = cq->peer_owner;
    if (cq == nullptr) return false;  // another library's owner
  }
  return cq->size.load(std::memory_order_acquire) >= cq->capacity;
}

// Queues a completion (or, on the thread of an fi_cq_read whose progress
// pass writes it while the CQ is empty, puts it straight into that read's
// buffer); `source` is what fi_cq_readfrom reports. With
// `reserved`, it uses a promise from CqReserve; otherwise it is queued
// even when the CQ is full (the overflow above). 0, or a peer CQ owner's
// refusal.
int CqWrite(UtilCq* cq, const fi_cq_tagged_entry& completion,
            fi_addr_t source = FI_ADDR_NOTAVAIL, bool reserved = false);

// Queues an error likewise; err_data is copied, cut to the domain's
// max_err_data.
int CqWriteError(UtilCq* cq, const fi_cq_err_entry& error,
                 bool reserved = false);

// Whether `cq`, one of our CQs, holds entries (errors included): one
// atomic load, no lock, for a provider that drains a CQ of its own on
// every progress pass.
inline bool CqHoldsEntries(fid_cq* cq) {
  return reinterpret_cast<const UtilCq*>(cq)->size.load(
             std::memory_order_acquire) != 0;
}

// fi_cq_read of one of our CQs without the progress it runs first: for a
// provider reading a CQ of its own from inside a progress pass (whose
// engine must not be run again). -FI_EAGAIN when empty, -FI_EAVAIL at an
// error entry (fi_cq_readerr runs no progress).
ssize_t CqReadWithoutProgress(fid_cq* cq, void* buf, size_t count);

// fi_trywait for one object: -FI_EAGAIN when `object` is one of our CQs
// with entries waiting (or input in shared memory that would not wake its
// fd), 0 when it has none, -FI_EINVAL when it is not ours.
int CqTryWait(fid* object);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_CQ_H_

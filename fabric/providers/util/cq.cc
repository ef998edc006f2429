#include "fabric/providers/util/cq.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/error_entry.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/peer_cq.h"
#include "fabric/providers/util/wait_set.h"

namespace fabric {
namespace {

constexpr uint64_t kCqOpenFlags = FI_AFFINITY | FI_PEER;

UtilCq* ToUtilCq(fid_cq* cq) { return FidCast<UtilCq>(cq); }

const fi_provider* Log(const UtilCq& cq) {
  return cq.domain->fabric->provider->c_provider();
}

ssize_t Fail(const UtilCq& cq, int fi_errno, const char* what) {
  FI_WARN(Log(cq), FI_LOG_CQ, "%s\n", what);
  return -fi_errno;
}

uint32_t ApiVersion(const UtilCq& cq) {
  return cq.domain->fabric->fabric_fid.api_version;
}

size_t EntrySize(fi_cq_format format) {
  switch (format) {
    case FI_CQ_FORMAT_CONTEXT:
      return sizeof(fi_cq_entry);
    case FI_CQ_FORMAT_MSG:
      return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
      return sizeof(fi_cq_data_entry);
    default:
      return sizeof(fi_cq_tagged_entry);
  }
}

int CloseCq(fid* object) {
  UtilCq* cq = FidCast<UtilCq>(object);
  if (cq->open_children.load() > 0) {
    FI_WARN(Log(*cq), FI_LOG_CQ, "CQ still bound to %d endpoints\n",
            cq->open_children.load());
    return -FI_EBUSY;
  }
  cq->domain->cq_count.fetch_sub(1);
  cq->domain->open_children.fetch_sub(1);
  delete cq;
  return 0;
}

int ControlCq(fid* object, int command, void* arg) {
  return FidCast<UtilCq>(object)->wait->Control(command, arg);
}

// The buffer of an fi_cq_read that runs progress on this thread while its
// CQ holds no entries: the completions for that CQ which the pass
// produces (Push) go straight into it, while the CQ stays empty and the
// buffer has room, instead of through the queue, its lock and a signal.
// Those are older than any entry the pass queues after them, and the read
// returns them.
//
// Global-dynamic (the default for a library), not initial-exec: Open MPI
// dlopens its components, and with initial-exec TLS the library failed to
// load there ("cannot allocate memory in static TLS block").
thread_local CqReadBuffer* reader_sink = nullptr;

// Makes `sink` this thread's for its lifetime (the outer one after).
class ScopedReaderSink {
 public:
  explicit ScopedReaderSink(CqReadBuffer* sink) : outer_(reader_sink) {
    reader_sink = sink;
  }
  ~ScopedReaderSink() { reader_sink = outer_; }
  ScopedReaderSink(const ScopedReaderSink&) = delete;
  ScopedReaderSink& operator=(const ScopedReaderSink&) = delete;

 private:
  CqReadBuffer* outer_;
};

// Writes `entry` into this thread's reader's buffer when that may be done
// (reader_sink); false when it goes to the queue.
bool WriteToReader(UtilCq& cq, const CqEntry& entry, bool reserved) {
  CqReadBuffer* sink = reader_sink;
  if (sink == nullptr || sink->cq != &cq || sink->written == sink->count ||
      cq.size.load(std::memory_order_acquire) != 0) {
    return false;
  }
  CqWriteToReader(sink, entry.completion, entry.source, reserved);
  return true;
}

// Gives back the room of `count` entries read; the lock is held (readers
// are the only writers of `taken`).
void Release(UtilCq& cq, size_t count) {
  cq.taken.store(cq.taken.load(std::memory_order_relaxed) + count,
                 std::memory_order_release);
}

// Copies up to `count` completions from the head (stopping at an error).
ssize_t TakeCompletions(UtilCq& cq, void* buf, size_t count, fi_addr_t* sources)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(cq.wait->mutex()) {
  size_t taken = 0;
  while (taken < count && !cq.entries.empty() && !cq.entries.front().is_error) {
    const CqEntry& entry = cq.entries.front();
    CqStoreEntry(cq, entry.completion, buf, taken);
    if (sources != nullptr) sources[taken] = entry.source;
    cq.entries.pop_front();
    ++taken;
  }
  cq.size.store(cq.entries.size(), std::memory_order_release);
  Release(cq, taken);
  if (cq.entries.empty()) cq.wait->Clear();
  if (taken > 0) return static_cast<ssize_t>(taken);
  return cq.entries.empty() ? -FI_EAGAIN : -FI_EAVAIL;
}

// What the CQ's direct producer writes into `buf` (CqDirectProducer), 0
// when there is none or it may not be asked (*asked false then).
size_t ReadDirect(UtilCq& cq, void* buf, size_t count, fi_addr_t* sources,
                  bool* asked) {
  CqDirectProducer* producer = cq.direct.load();
  if (producer == nullptr ||
      cq.direct_bindings.load(std::memory_order_relaxed) !=
          cq.open_children.load(std::memory_order_relaxed) ||
      cq.owner_fid_exported.load(std::memory_order_relaxed)) {
    return 0;
  }
  *asked = true;
  // No endpoint closes during a read of a serialized CQ.
  if (CqSerialized(cq)) return producer->ReadDirect(&cq, buf, count, sources);
  // Announced before the second look: CqClearDirect either sees this
  // reader and waits, or this reader sees the producer gone.
  cq.direct_readers.fetch_add(1);
  size_t n = 0;
  if (cq.direct.load() == producer) {
    n = producer->ReadDirect(&cq, buf, count, sources);
  }
  cq.direct_readers.fetch_sub(1);
  return n;
}

ssize_t CheckReadArguments(const UtilCq& cq, const void* buf, size_t count) {
  if (buf == nullptr && count > 0) {
    return Fail(cq, FI_EINVAL, "fi_cq_read: buf is NULL");
  }
  return 0;
}

// Whether an fi_cq_read that found the CQ empty runs the progress pass:
// always, unless its direct producer was asked and found nothing, which
// runs it only once in kDirectProgressInterval reads. (Under automatic
// progress always: the engine's thread takes an application that runs no
// pass for a while for an idle one and starts polling beside it.)
bool RunsProgress(UtilCq& cq, bool asked_producer) {
  if (!asked_producer) return true;  // no shared write on that path
  const fi_info* info = cq.domain->info.get();
  if (info == nullptr || info->domain_attr->data_progress == FI_PROGRESS_AUTO) {
    return true;
  }
  // Not a locked increment: two readers that count one read as one only
  // run the pass a little later.
  uint32_t reads = cq.direct_empty_reads.load(std::memory_order_relaxed) + 1;
  if (reads < kDirectProgressInterval) {
    cq.direct_empty_reads.store(reads, std::memory_order_relaxed);
    return false;
  }
  cq.direct_empty_reads.store(0, std::memory_order_relaxed);
  return true;
}

ssize_t ReadFromCq(fid_cq* cq_fid, void* buf, size_t count,
                   fi_addr_t* sources) {
  UtilCq& cq = *ToUtilCq(cq_fid);
  if (ssize_t rc = CheckReadArguments(cq, buf, count); rc != 0) return rc;
  // Progress only when there is nothing to hand out already: a completion
  // that is waiting costs no system call.
  if (cq.size.load(std::memory_order_acquire) == 0) {
    bool asked = false;
    if (count > 0) {
      if (size_t n = ReadDirect(cq, buf, count, sources, &asked); n > 0) {
        return static_cast<ssize_t>(n);
      }
    }
    if (RunsProgress(cq, asked)) {
      CqReadBuffer sink = {&cq, buf, sources, count};
      {
        ScopedReaderSink scoped(&sink);
        cq.wait->Progress();
      }
      if (sink.written > 0) return static_cast<ssize_t>(sink.written);
    }
    if (cq.size.load(std::memory_order_acquire) == 0) return -FI_EAGAIN;
  }
  CondLock lock(cq.wait->mutex());
  if (count == 0) return cq.entries.empty() ? -FI_EAGAIN : 0;
  return TakeCompletions(cq, buf, count, sources);
}

ssize_t ReadCq(fid_cq* cq, void* buf, size_t count) {
  return ReadFromCq(cq, buf, count, nullptr);
}

ssize_t SreadFromCq(fid_cq* cq_fid, void* buf, size_t count, fi_addr_t* sources,
                    const void* cond, int timeout) {
  UtilCq& cq = *ToUtilCq(cq_fid);
  if (ssize_t rc = CheckReadArguments(cq, buf, count); rc != 0) return rc;
  if (!cq.wait->can_block()) {
    return Fail(cq, FI_EINVAL,
                "fi_cq_sread on a CQ opened with FI_WAIT_NONE");
  }
  size_t threshold = 1;
  if (cq.wait_cond == FI_CQ_COND_THRESHOLD && cond != nullptr) {
    threshold = std::max<size_t>(1, *static_cast<const size_t*>(cond));
  }
  CondLock lock(cq.wait->mutex());
  bool woke = cq.wait->Wait(
      lock, timeout,
      [&cq, threshold]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(cq.wait->mutex()) {
        return cq.signaled || cq.entries.size() >= threshold ||
               (!cq.entries.empty() && cq.entries.front().is_error);
      });
  if (cq.signaled) {
    cq.signaled = false;
    return -FI_ECANCELED;
  }
  if (!woke) return -FI_EAGAIN;
  return TakeCompletions(cq, buf, count, sources);
}

ssize_t SreadCq(fid_cq* cq, void* buf, size_t count, const void* cond,
                int timeout) {
  return SreadFromCq(cq, buf, count, nullptr, cond, timeout);
}

ssize_t ReadErrCq(fid_cq* cq_fid, fi_cq_err_entry* buf, uint64_t flags) {
  UtilCq& cq = *ToUtilCq(cq_fid);
  if (buf == nullptr) return Fail(cq, FI_EINVAL, "fi_cq_readerr: buf is NULL");
  if (flags != 0) return Fail(cq, FI_EBADFLAGS, "fi_cq_readerr: unknown flags");
  MutexLock lock(cq.wait->mutex());
  if (cq.entries.empty() || !cq.entries.front().is_error) return -FI_EAGAIN;
  CqError& head = cq.errors.front();
  DeliverErrorEntry(ApiVersion(cq), head.error, std::move(head.err_data),
                    &cq.last_err_data, buf);
  cq.errors.pop_front();
  cq.entries.pop_front();
  cq.size.store(cq.entries.size(), std::memory_order_release);
  Release(cq, 1);
  if (cq.entries.empty()) cq.wait->Clear();
  return 1;
}

int SignalCq(fid_cq* cq_fid) {
  UtilCq& cq = *ToUtilCq(cq_fid);
  MutexLock lock(cq.wait->mutex());
  cq.signaled = true;
  cq.wait->Signal();
  return 0;
}

const char* StrerrorCq(fid_cq*, int prov_errno, const void*, char* buf,
                       size_t len) {
  return ErrorText(prov_errno, buf, len);
}

// One more (n = 1) or one fewer (n = -1) in `committed`.
void AddToCommitted(UtilCq& cq, int n) {
  if (CqSerialized(cq)) {
    cq.committed.store(cq.committed.load(std::memory_order_relaxed) + n,
                       std::memory_order_relaxed);
  } else {
    cq.committed.fetch_add(n, std::memory_order_relaxed);
  }
}

// Counts one more entry or promise in `committed`, unless the CQ is full.
bool TakeRoom(UtilCq& cq) {
  // `taken` first: it never exceeds `committed` as loaded after it (room
  // is given back only for entries counted there). Acquire: pairs with
  // Release, so that room given back is seen.
  size_t taken = cq.taken.load(std::memory_order_acquire);
  size_t committed = cq.committed.load(std::memory_order_relaxed);
  if (CqSerialized(cq)) {
    if (committed - taken >= cq.capacity) return false;
    cq.committed.store(committed + 1, std::memory_order_relaxed);
    return true;
  }
  do {
    if (committed - taken >= cq.capacity) return false;
  } while (!cq.committed.compare_exchange_weak(committed, committed + 1,
                                               std::memory_order_relaxed));
  return true;
}

// Queues `entry`, and `error` with it when the entry is an error's. A
// reserved entry's room is counted already; any other is counted too, past
// capacity when the CQ is full (the overflow), so that reservations wait
// until the application has read it.
int Push(UtilCq& cq, const CqEntry& entry, CqError* error, bool reserved) {
  if (error == nullptr && WriteToReader(cq, entry, reserved)) return 0;
  if (!reserved && !TakeRoom(cq)) AddToCommitted(cq, 1);
  MutexLock lock(cq.wait->mutex());
  cq.entries.push_back(entry);
  if (error != nullptr) cq.errors.push_back(std::move(*error));
  cq.size.store(cq.entries.size(), std::memory_order_release);
  cq.wait->Signal();
  return 0;
}

fi_ops kCqFidOps = MakeFidOps({.close = CloseCq, .control = ControlCq});

fi_ops_cq kCqOps = {
    .size = sizeof(fi_ops_cq),
    .read = ReadCq,
    .readfrom = ReadFromCq,
    .readerr = ReadErrCq,
    .sread = SreadCq,
    .sreadfrom = SreadFromCq,
    .signal = SignalCq,
    .strerror = StrerrorCq,
};

absl::Status CheckAttr(const UtilDomain& domain, const fi_cq_attr& attr) {
  if ((attr.flags & ~kCqOpenFlags) != 0) {
    return FiError(FI_EBADFLAGS, "fi_cq_open: unknown flags");
  }
  int format = EnumValue(attr.format);
  if (format < FI_CQ_FORMAT_UNSPEC || format > FI_CQ_FORMAT_TAGGED) {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_cq_open: unknown format ", format));
  }
  int wait_cond = EnumValue(attr.wait_cond);
  if (wait_cond != FI_CQ_COND_NONE && wait_cond != FI_CQ_COND_THRESHOLD) {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_cq_open: unknown wait_cond ", wait_cond));
  }
  if (domain.cq_count.load() >=
      static_cast<int>(domain.info->domain_attr->cq_cnt)) {
    return FiError(FI_ENOSPC, absl::StrCat("fi_cq_open: the domain's cq_cnt (",
                                           domain.info->domain_attr->cq_cnt,
                                           ") CQs are open"));
  }
  return absl::OkStatus();
}

}  // namespace

UtilCq* AsUtilCq(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_CQ ||
      object->ops != &kCqFidOps) {
    return nullptr;
  }
  return FidCast<UtilCq>(object);
}

int OpenUtilCq(fid_domain* domain_fid, fi_cq_attr* attr, fid_cq** cq_out,
               void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  absl::Status status =
      attr == nullptr || cq_out == nullptr
          ? FiError(FI_EINVAL, "fi_cq_open: attr and cq must not be NULL")
          : CheckAttr(*domain, *attr);
  absl::StatusOr<std::unique_ptr<WaitObject>> wait =
      status.ok() ? CreateWaitObject(EnumValue(attr->wait_obj), attr->wait_set,
                                     *domain->fabric, domain->progress.get())
                  : status;
  if (!wait.ok()) {
    FI_WARN(log, FI_LOG_CQ, "%s\n",
            std::string(wait.status().message()).c_str());
    return ToFiErrno(wait.status());
  }
  absl::StatusOr<fid_peer_cq*> peer =
      (attr->flags & FI_PEER) != 0 ? ImportedPeerCq(context) : nullptr;
  if (!peer.ok()) {
    FI_WARN(log, FI_LOG_CQ, "%s\n",
            std::string(peer.status().message()).c_str());
    return ToFiErrno(peer.status());
  }
  UtilCq* cq = new UtilCq;
  cq->cq_fid = {};
  InitFid(&cq->cq_fid.fid, FI_CLASS_CQ, context, &kCqFidOps);
  cq->peer = *peer;
  cq->peer_owner = cq->peer != nullptr ? OwnerUtilCq(cq->peer) : nullptr;
  cq->cq_fid.ops = cq->peer != nullptr ? &kPeerCqOps : &kCqOps;
  InitOwnerFid(cq);
  cq->domain = domain;
  cq->format =
      attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
  cq->entry_size = EntrySize(cq->format);
  cq->capacity = attr->size != 0 ? attr->size
                                 : domain->info->rx_attr->size +
                                       domain->info->tx_attr->size;
  cq->wait_cond = attr->wait_cond;
  cq->wait = *std::move(wait);
  // Not in a wait set: fi_wait on the set runs the progress of every
  // domain in it, from whichever thread waits.
  cq->app_serializes = AppSerializesDomain(*domain->info->domain_attr) &&
                       attr->wait_obj != FI_WAIT_SET;
  domain->cq_count.fetch_add(1);
  domain->open_children.fetch_add(1);
  *cq_out = &cq->cq_fid;
  return 0;
}

void CqSetDirect(UtilCq* cq, CqDirectProducer* producer, int bindings) {
  if (cq->peer != nullptr) return;
  cq->direct_bindings.store(bindings);
  cq->direct.store(producer);
}

void CqClearDirect(UtilCq* cq, CqDirectProducer* producer) {
  CqDirectProducer* expected = producer;
  cq->direct.compare_exchange_strong(expected, nullptr);
  while (cq->direct_readers.load() != 0) std::this_thread::yield();
}

size_t CqReadDirectFrom(fid_cq* cq_fid, CqDirectProducer* producer, void* buf,
                        size_t count) {
  UtilCq* cq = ToUtilCq(cq_fid);
  if (count == 0 || cq->size.load(std::memory_order_acquire) != 0) return 0;
  return producer->ReadDirect(cq, buf, count, nullptr);
}

int CqReserve(UtilCq* cq) {
  // A peer's entries reach the owner unreserved (the owner's write takes no
  // promise): a full owner of ours still refuses the post.
  if (cq->peer != nullptr) return CqFull(cq) ? -FI_EAGAIN : 0;
  return TakeRoom(*cq) ? 0 : -FI_EAGAIN;
}

void CqUnreserve(UtilCq* cq) {
  if (cq->peer != nullptr) return;
  AddToCommitted(*cq, -1);
}

int CqWrite(UtilCq* cq, const fi_cq_tagged_entry& completion, fi_addr_t source,
            bool reserved) {
  // An owner of ours takes the entry as its write (peer_cq.cc OwnerWrite)
  // would pass it on, without the call through the peer's ops.
  if (cq->peer_owner != nullptr) {
    return CqWrite(cq->peer_owner, completion, source, false);
  }
  if (cq->peer != nullptr) {
    return static_cast<int>(cq->peer->owner_ops->write(
        cq->peer, completion.op_context, completion.flags, completion.len,
        completion.buf, completion.data, completion.tag, source));
  }
  return Push(*cq, CqEntry{completion, source, false}, nullptr, reserved);
}

int CqWriteError(UtilCq* cq, const fi_cq_err_entry& error, bool reserved) {
  if (cq->peer != nullptr) {
    return static_cast<int>(cq->peer->owner_ops->writeerr(cq->peer, &error));
  }
  CqError details;
  details.error = error;
  if (error.err_data != nullptr && error.err_data_size > 0) {
    size_t size = std::min(error.err_data_size,
                           cq->domain->info->domain_attr->max_err_data);
    const char* data = static_cast<const char*>(error.err_data);
    details.err_data.assign(data, data + size);
  }
  details.error.err_data = nullptr;
  details.error.err_data_size = 0;
  CqEntry entry;
  entry.is_error = true;
  return Push(*cq, entry, &details, reserved);
}

ssize_t CqReadWithoutProgress(fid_cq* cq_fid, void* buf, size_t count) {
  UtilCq& cq = *ToUtilCq(cq_fid);
  if (cq.size.load(std::memory_order_acquire) == 0) return -FI_EAGAIN;
  MutexLock lock(cq.wait->mutex());
  return TakeCompletions(cq, buf, count, nullptr);
}

int CqTryWait(fid* object) {
  UtilCq* cq = AsUtilCq(object);
  if (cq == nullptr) return -FI_EINVAL;
  cq->wait->Progress();
  if (!cq->wait->PrepareToSleep()) return -FI_EAGAIN;
  MutexLock lock(cq->wait->mutex());
  return cq->entries.empty() ? 0 : -FI_EAGAIN;
}

}  // namespace fabric

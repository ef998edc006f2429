// The fi_atomic(3) calls of stream endpoints: each checks its arguments
// against the one table of supported operations (atomic_ops.h), copies
// the operands (and compare values) into the request, which goes out as
// Op::kAtomic; the target's answer completes it (link.cc), with the old
// values for the fetching kinds.
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <mutex>

#include "fabric/api/core/status.h"
#include "fabric/providers/stream/atomic_ops.h"
#include "fabric/providers/stream/stream_calls.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/app_buffer.h"

namespace fabric {
namespace stream {
namespace {

// `list` as bytes of `element`-sized elements; FI_EINVAL status for more
// than `limit` entries, a null list, or an element count other than
// `elements`.
absl::StatusOr<AppBuffer> Describe(const UtilDomain& domain,
                                   const IocList& list, size_t element,
                                   size_t limit, size_t elements,
                                   std::vector<iovec>* iov) {
  if (list.count == 0 || list.count > limit || list.ioc == nullptr) {
    return FiError(FI_EINVAL, "buffer list of 0 or more than iov_limit "
                              "entries");
  }
  size_t total = 0;
  for (size_t i = 0; i < list.count; ++i) {
    total += list.ioc[i].count;
    if (list.ioc[i].count > elements || total > elements) {
      return FiError(FI_EINVAL, "local and remote element counts differ");
    }
    iov->push_back({list.ioc[i].addr, list.ioc[i].count * element});
  }
  if (total != elements) {
    return FiError(FI_EINVAL, "local and remote element counts differ");
  }
  AppBuffer buffer;
  FABRIC_RETURN_IF_ERROR(
      DescribeAppBuffer(domain, iov->data(), list.desc, list.count, &buffer)
          .status());
  return buffer;
}

// Appends the bytes of `list` to entry->owned.
absl::Status TakeOperands(const UtilDomain& domain, const IocList& list,
                          size_t element, size_t limit, size_t elements,
                          TxEntry* entry) {
  std::vector<iovec> iov;
  absl::StatusOr<AppBuffer> buffer =
      Describe(domain, list, element, limit, elements, &iov);
  if (!buffer.ok()) return buffer.status();
  size_t offset = entry->owned.size();
  entry->owned.resize(offset + elements * element);
  ssize_t copied = GatherAppBuffer(domain.copier, *buffer,
                                   entry->owned.data() + offset,
                                   elements * element);
  if (copied < 0) return FiError(static_cast<int>(-copied), "copying operands");
  return absl::OkStatus();
}

// The request's entry without its id and link: fi_errno status for bad
// arguments.
absl::StatusOr<std::unique_ptr<TxEntry>> BuildAtomic(
    StreamEp* ep, const AtomicCall& request) {
  const UtilDomain& domain = *ep->util.domain;
  const fi_tx_attr& tx = *ep->util.info->tx_attr;
  size_t element = AtomicDatatypeSize(request.datatype);
  if (element == 0 || request.op < 0 || request.op >= FI_ATOMIC_OP_LAST) {
    return FiError(FI_EINVAL, "unknown datatype or op");
  }
  if (!AtomicSupported(request.datatype, request.op, request.kind)) {
    return FiError(FI_EOPNOTSUPP, "atomic op not supported on the datatype "
                                  "by this call");
  }
  if (request.rma == nullptr || request.rma_count == 0 ||
      request.rma_count > std::min<size_t>(kMaxRmaCount, tx.rma_iov_limit)) {
    return FiError(FI_EINVAL, "rma_iov count outside 1..rma_iov_limit");
  }
  auto entry = std::make_unique<TxEntry>();
  size_t elements = 0;
  for (size_t i = 0; i < request.rma_count; ++i) {
    elements += request.rma[i].count;
    if (request.rma[i].count > kMaxAtomicBytes ||
        elements > kMaxAtomicBytes / element) {
      return FiError(FI_EINVAL, "more elements than the atomic count limit");
    }
    entry->descriptors[i] = {request.rma[i].addr,
                             request.rma[i].count * element,
                             request.rma[i].key};
  }
  if (elements == 0) return FiError(FI_EINVAL, "atomic on no elements");
  if (request.op != FI_ATOMIC_READ) {
    FABRIC_RETURN_IF_ERROR(TakeOperands(domain, request.operands, element,
                                        tx.iov_limit, elements, entry.get()));
  }
  if (request.kind == AtomicKind::kCompare) {
    FABRIC_RETURN_IF_ERROR(TakeOperands(domain, request.compare, element,
                                        tx.iov_limit, elements, entry.get()));
  }
  if ((request.flags & FI_INJECT) && entry->owned.size() > tx.inject_size) {
    return FiError(FI_EINVAL, "inject of more than inject_size bytes");
  }
  bool fetch = request.kind != AtomicKind::kWrite;
  if (fetch) {
    absl::StatusOr<AppBuffer> result =
        Describe(domain, request.result, element, tx.iov_limit, elements,
                 &entry->read_iov);
    if (!result.ok()) return result.status();
    entry->read_iface = result->front().iface;
    entry->read_device = result->front().device;
  }
  Header& header = entry->header;
  header.op = static_cast<uint8_t>(Op::kAtomic);
  header.tag = PackAtomic({request.datatype, request.op, request.kind});
  header.rma_count = static_cast<uint16_t>(request.rma_count);
  header.size = entry->owned.size();
  if (request.flags & FI_REMOTE_CQ_DATA) {
    header.flags |= kRemoteData;
    header.data = request.data;
  }
  entry->payload = {{entry->owned.data(), entry->owned.size()}};
  entry->awaits_answer = true;
  entry->completion.op_context = request.context;
  entry->completion.flags = FI_ATOMIC | (fetch ? FI_READ : FI_WRITE);
  entry->cntr = fetch ? kReadCntr : kWriteCntr;
  return entry;
}

}  // namespace

ssize_t StreamCalls::Atomic(fid_ep* ep_fid, const AtomicCall& request) {
  StreamEp* ep = ToStreamEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (ssize_t rc = CheckTransmit(*ep, request.flags); rc != 0) return rc;
  absl::StatusOr<std::unique_ptr<TxEntry>> entry = BuildAtomic(ep, request);
  if (!entry.ok()) {
    return FailOp(*ep, -ToFiErrno(entry.status()),
                  std::string(entry.status().message()).c_str());
  }
  return SendTx(ep, request.dest, *std::move(entry), request.flags,
                request.inject_call);
}

int StreamCalls::AtomicValid(fid_ep*, AtomicKind kind, fi_datatype datatype,
                             fi_op op, size_t* count) {
  if (count == nullptr) return -FI_EINVAL;
  fi_atomic_attr attr = {};
  int rc = QueryAtomicKind(datatype, op, kind, &attr);
  if (rc == 0) *count = attr.count;
  return rc;
}

fi_ops_atomic kStreamAtomicOps = AtomicOps<StreamCalls>();

}  // namespace stream
}  // namespace fabric

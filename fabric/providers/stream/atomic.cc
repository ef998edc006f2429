// The fi_atomic(3) calls of stream endpoints: each checks its arguments
// against the one table of supported operations (atomic_ops.h), copies
// the operands (and compare values) into the request, which goes out as
// Op::kAtomic; the target's answer completes it (link.cc), with the old
// values for the fetching kinds.
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>

#include <mutex>
#include <optional>

#include "fabric/api/core/status.h"
#include "fabric/providers/stream/atomic_ops.h"
#include "fabric/providers/stream/divert.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/app_buffer.h"

namespace fabric {
namespace stream {
namespace {

// One of the buffer lists of a request (operands, compare values, results).
struct IocList {
  const fi_ioc* ioc = nullptr;
  void** desc = nullptr;
  size_t count = 0;
};

struct AtomicRequest {
  AtomicKind kind;
  IocList operands;
  IocList compare;  // kCompare
  IocList result;   // kFetch, kCompare
  const fi_rma_ioc* rma = nullptr;
  size_t rma_count = 0;
  int datatype = 0;
  int op = 0;
  uint64_t data = 0;
  void* context = nullptr;
  uint64_t flags = 0;
  bool inject_call = false;
};

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
    StreamEp* ep, const AtomicRequest& request) {
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

ssize_t PostAtomic(fid_ep* ep_fid, fi_addr_t dest,
                   const AtomicRequest& request) {
  StreamEp* ep = ToStreamEp(ep_fid);
  std::lock_guard<OptionalMutex> lock(ep->util.mutex);
  if (ssize_t rc = CheckTransmit(*ep, request.flags); rc != 0) return rc;
  absl::StatusOr<std::unique_ptr<TxEntry>> entry = BuildAtomic(ep, request);
  if (!entry.ok()) {
    return FailOp(*ep, -ToFiErrno(entry.status()),
                  std::string(entry.status().message()).c_str());
  }
  return SendTx(ep, dest, *std::move(entry), request.flags,
                request.inject_call);
}

uint64_t TxFlags(fid_ep* ep) { return ToStreamEp(ep)->util.tx_op_flags; }

// fi_atomic, fi_fetch_atomic and fi_compare_atomic on one buffer each.
ssize_t One(fid_ep* ep, AtomicKind kind, const void* buf, size_t count,
            void* desc, const void* compare, void* compare_desc, void* result,
            void* result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
            fi_datatype datatype, fi_op op, void* context, uint64_t flags,
            bool inject_call) {
  fi_ioc operand = {const_cast<void*>(buf), count};
  fi_ioc compare_ioc = {const_cast<void*>(compare), count};
  fi_ioc result_ioc = {result, count};
  fi_rma_ioc rma = {addr, count, key};
  return PostAtomic(
      ep, dest,
      {kind, {&operand, &desc, 1}, {&compare_ioc, &compare_desc, 1},
       {&result_ioc, &result_desc, 1}, &rma, 1, datatype, op, 0, context,
       flags, inject_call});
}

size_t Elements(const fi_ioc* ioc, size_t count) {
  size_t total = 0;
  for (size_t i = 0; ioc != nullptr && i < count; ++i) total += ioc[i].count;
  return total;
}

// --- fi_atomic ---------------------------------------------------------------

ssize_t Write(fid_ep* ep, const void* buf, size_t count, void* desc,
              fi_addr_t dest, uint64_t addr, uint64_t key,
              fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, dest, &fid_ep::atomic, &fi_ops_atomic::write, buf, count,
                   desc, dest, addr, key, datatype, op, context)) {
    return *rc;
  }
  return One(ep, AtomicKind::kWrite, buf, count, desc, nullptr, nullptr,
             nullptr, nullptr, dest, addr, key, datatype, op, context,
             TxFlags(ep), false);
}
ssize_t Writev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
               fi_addr_t dest, uint64_t addr, uint64_t key,
               fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, dest, &fid_ep::atomic, &fi_ops_atomic::writev, iov, desc,
                   count, dest, addr, key, datatype, op, context)) {
    return *rc;
  }
  fi_rma_ioc rma = {addr, Elements(iov, count), key};
  return PostAtomic(ep, dest,
                    {AtomicKind::kWrite, {iov, desc, count}, {}, {}, &rma, 1,
                     datatype, op, 0, context, TxFlags(ep)});
}
ssize_t Writemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, DestOf(msg), &fid_ep::atomic, &fi_ops_atomic::writemsg,
                   msg, flags)) {
    return *rc;
  }
  if (msg == nullptr) return -FI_EINVAL;
  return PostAtomic(ep, msg->addr,
                    {AtomicKind::kWrite, {msg->msg_iov, msg->desc,
                     msg->iov_count}, {}, {}, msg->rma_iov,
                     msg->rma_iov_count, msg->datatype, msg->op, msg->data,
                     msg->context, flags});
}
ssize_t Inject(fid_ep* ep, const void* buf, size_t count, fi_addr_t dest,
               uint64_t addr, uint64_t key, fi_datatype datatype, fi_op op) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, dest, &fid_ep::atomic, &fi_ops_atomic::inject, buf,
                   count, dest, addr, key, datatype, op)) {
    return *rc;
  }
  return One(ep, AtomicKind::kWrite, buf, count, nullptr, nullptr, nullptr,
             nullptr, nullptr, dest, addr, key, datatype, op, nullptr,
             FI_INJECT, true);
}

// --- fi_fetch_atomic ---------------------------------------------------------

ssize_t Fetch(fid_ep* ep, const void* buf, size_t count, void* desc,
              void* result, void* result_desc, fi_addr_t dest, uint64_t addr,
              uint64_t key, fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc = Diverted(
          ep, dest, &fid_ep::atomic, &fi_ops_atomic::readwrite, buf, count,
          desc, result, result_desc, dest, addr, key, datatype, op, context)) {
    return *rc;
  }
  return One(ep, AtomicKind::kFetch, buf, count, desc, nullptr, nullptr,
             result, result_desc, dest, addr, key, datatype, op, context,
             TxFlags(ep), false);
}
ssize_t Fetchv(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
               fi_ioc* resultv, void** result_desc, size_t result_count,
               fi_addr_t dest, uint64_t addr, uint64_t key,
               fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, dest, &fid_ep::atomic, &fi_ops_atomic::readwritev, iov,
                   desc, count, resultv, result_desc, result_count, dest, addr,
                   key, datatype, op, context)) {
    return *rc;
  }
  fi_rma_ioc rma = {addr, Elements(resultv, result_count), key};
  return PostAtomic(ep, dest,
                    {AtomicKind::kFetch, {iov, desc, count}, {},
                     {resultv, result_desc, result_count}, &rma, 1, datatype,
                     op, 0, context, TxFlags(ep)});
}
ssize_t Fetchmsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv,
                 void** result_desc, size_t result_count, uint64_t flags) {
  if (std::optional<ssize_t> rc = Diverted(
          ep, DestOf(msg), &fid_ep::atomic, &fi_ops_atomic::readwritemsg, msg,
          resultv, result_desc, result_count, flags)) {
    return *rc;
  }
  if (msg == nullptr) return -FI_EINVAL;
  return PostAtomic(ep, msg->addr,
                    {AtomicKind::kFetch, {msg->msg_iov, msg->desc,
                     msg->iov_count}, {}, {resultv, result_desc, result_count},
                     msg->rma_iov, msg->rma_iov_count, msg->datatype, msg->op,
                     msg->data, msg->context, flags});
}

// --- fi_compare_atomic -------------------------------------------------------

ssize_t Compare(fid_ep* ep, const void* buf, size_t count, void* desc,
                const void* compare, void* compare_desc, void* result,
                void* result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, dest, &fid_ep::atomic, &fi_ops_atomic::compwrite, buf,
                   count, desc, compare, compare_desc, result, result_desc,
                   dest, addr, key, datatype, op, context)) {
    return *rc;
  }
  return One(ep, AtomicKind::kCompare, buf, count, desc, compare, compare_desc,
             result, result_desc, dest, addr, key, datatype, op, context,
             TxFlags(ep), false);
}
ssize_t Comparev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
                 const fi_ioc* comparev, void** compare_desc,
                 size_t compare_count, fi_ioc* resultv, void** result_desc,
                 size_t result_count, fi_addr_t dest, uint64_t addr,
                 uint64_t key, fi_datatype datatype, fi_op op, void* context) {
  if (std::optional<ssize_t> rc = Diverted(
          ep, dest, &fid_ep::atomic, &fi_ops_atomic::compwritev, iov, desc,
          count, comparev, compare_desc, compare_count, resultv, result_desc,
          result_count, dest, addr, key, datatype, op, context)) {
    return *rc;
  }
  fi_rma_ioc rma = {addr, Elements(iov, count), key};
  return PostAtomic(ep, dest,
                    {AtomicKind::kCompare, {iov, desc, count},
                     {comparev, compare_desc, compare_count},
                     {resultv, result_desc, result_count}, &rma, 1, datatype,
                     op, 0, context, TxFlags(ep)});
}
ssize_t Comparemsg(fid_ep* ep, const fi_msg_atomic* msg,
                   const fi_ioc* comparev, void** compare_desc,
                   size_t compare_count, fi_ioc* resultv, void** result_desc,
                   size_t result_count, uint64_t flags) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, DestOf(msg), &fid_ep::atomic,
                   &fi_ops_atomic::compwritemsg, msg, comparev, compare_desc,
                   compare_count, resultv, result_desc, result_count, flags)) {
    return *rc;
  }
  if (msg == nullptr) return -FI_EINVAL;
  return PostAtomic(ep, msg->addr,
                    {AtomicKind::kCompare, {msg->msg_iov, msg->desc,
                     msg->iov_count}, {comparev, compare_desc, compare_count},
                     {resultv, result_desc, result_count}, msg->rma_iov,
                     msg->rma_iov_count, msg->datatype, msg->op, msg->data,
                     msg->context, flags});
}

// --- fi_atomicvalid & co. ----------------------------------------------------

int Valid(AtomicKind kind, fi_datatype datatype, fi_op op, size_t* count) {
  if (count == nullptr) return -FI_EINVAL;
  fi_atomic_attr attr = {};
  int rc = QueryAtomicKind(datatype, op, kind, &attr);
  if (rc == 0) *count = attr.count;
  return rc;
}
int WriteValid(fid_ep*, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(AtomicKind::kWrite, datatype, op, count);
}
int FetchValid(fid_ep*, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(AtomicKind::kFetch, datatype, op, count);
}
int CompareValid(fid_ep*, fi_datatype datatype, fi_op op, size_t* count) {
  return Valid(AtomicKind::kCompare, datatype, op, count);
}

}  // namespace

fi_ops_atomic kStreamAtomicOps = {
    .size = sizeof(fi_ops_atomic),
    .write = Write,
    .writev = Writev,
    .writemsg = Writemsg,
    .inject = Inject,
    .readwrite = Fetch,
    .readwritev = Fetchv,
    .readwritemsg = Fetchmsg,
    .compwrite = Compare,
    .compwritev = Comparev,
    .compwritemsg = Comparemsg,
    .writevalid = WriteValid,
    .readwritevalid = FetchValid,
    .compwritevalid = CompareValid,
};

}  // namespace stream
}  // namespace fabric

// The target of an atomic request (Op::kAtomic): the memory is checked
// like an RMA's (FI_REMOTE_WRITE, and FI_REMOTE_READ for the kinds that
// return the old values), the operands are read into a buffer, then the
// operation is applied under the domain's atomic_mutex, so that atomics
// from every endpoint of the domain are atomic with respect to each other.
// Bytes move between the target memory and the provider's buffers through
// the domain's HmemCopier.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <mutex>

#include "fabric/providers/stream/atomic_ops.h"
#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {
namespace {

size_t TargetBytes(const Link& link) {
  size_t total = 0;
  for (const iovec& piece : link.rma_target) total += piece.iov_len;
  return total;
}

// Applies the atomic `code` to the link's target memory; the values before
// it in *old. 0 or a negative fi_errno from a copy.
int Apply(Link* link, const AtomicCode& code, std::vector<char>* old) {
  UtilDomain* domain = link->ep->util.domain;
  const HmemCopier& copier = domain->copier;
  size_t bytes = old->size();
  const char* operands = link->atomic_operands.data();
  const char* compare =
      code.kind == AtomicKind::kCompare ? operands + bytes : nullptr;
  std::lock_guard<std::mutex> lock(domain->atomic_mutex);
  ssize_t copied =
      copier.CopyFromIov(old->data(), bytes, link->rma_iface, link->rma_device,
                         link->rma_target.data(), link->rma_target.size(), 0);
  if (copied != static_cast<ssize_t>(bytes)) {
    return copied < 0 ? static_cast<int>(copied) : -FI_EIO;
  }
  if (code.op == FI_ATOMIC_READ) return 0;
  std::vector<char> value = *old;
  ApplyAtomic(code.datatype, code.op, bytes / AtomicDatatypeSize(code.datatype),
              value.data(), operands, compare, nullptr);
  copied = copier.CopyToIov(link->rma_iface, link->rma_device,
                            link->rma_target.data(), link->rma_target.size(),
                            0, value.data(), bytes);
  if (copied != static_cast<ssize_t>(bytes)) {
    return copied < 0 ? static_cast<int>(copied) : -FI_EIO;
  }
  return 0;
}

}  // namespace

RxTarget AtomicHeader(Link* link, const Header& header,
                      const RmaDescriptor* descriptors) {
  AtomicCode code = UnpackAtomic(header.tag);
  link->atomic_operands.clear();
  link->rma_target.clear();
  if (!AtomicSupported(code.datatype, code.op, code.kind)) {
    FI_WARN(link->ep->log(), FI_LOG_EP_DATA,
            "atomic op %d on datatype %d refused: not supported\n", code.op,
            code.datatype);
    link->rma_status = -FI_EOPNOTSUPP;
    return RxTarget{RxTarget::kDiscard};
  }
  uint64_t access = FI_REMOTE_WRITE;
  if (code.kind != AtomicKind::kWrite) access |= FI_REMOTE_READ;
  RxTarget memory;
  link->rma_status = ResolveRma(link, header, descriptors, access, &memory);
  if (link->rma_status != 0) return RxTarget{RxTarget::kDiscard};
  link->rma_iface = memory.iface;
  link->rma_device = memory.device;
  link->atomic_operands.reserve(header.size);
  RxTarget target;
  target.kind = RxTarget::kBuffer;
  target.buffer = &link->atomic_operands;
  return target;
}

void AtomicDone(Link* link, const Header& header) {
  AtomicCode code = UnpackAtomic(header.tag);
  std::vector<char> old(TargetBytes(*link));
  int status = link->rma_status;
  if (status == 0) status = Apply(link, code, &old);
  bool fetch = code.kind != AtomicKind::kWrite;
  if (status == 0) RemoteAccessDone(link, header, FI_ATOMIC, fetch);
  if (!fetch || status != 0) {
    SendAnswer(link, fetch ? Op::kReadResponse : Op::kAck, header.id, status);
    return;
  }
  auto answer = std::make_unique<TxEntry>();
  answer->header.op = static_cast<uint8_t>(Op::kReadResponse);
  answer->header.id = header.id;
  answer->header.size = old.size();
  answer->owned = std::move(old);
  answer->payload = {{answer->owned.data(), answer->owned.size()}};
  answer->report = false;
  link->connection.Send(std::move(answer));
}

}  // namespace stream
}  // namespace fabric

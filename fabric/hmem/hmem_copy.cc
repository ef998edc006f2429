#include "fabric/hmem/hmem_copy.h"

#include <rdma/fi_errno.h>

#include <string.h>

#include <algorithm>

#include "absl/status/statusor.h"
#include "fabric/api/core/status.h"
#include "fabric/hmem/memory_interface.h"

namespace fabric {
namespace {

// Walks the bytes of `iov` from `offset` on, handing each contiguous piece,
// up to `size` bytes in all, to `copy(piece, bytes_before_piece, length)`.
// Returns the bytes walked or the first error.
template <typename CopyPiece>
ssize_t ForEachPiece(const struct iovec* iov, size_t iov_count,
                     uint64_t offset, size_t size, CopyPiece copy) {
  size_t done = 0;
  for (size_t i = 0; i < iov_count && done < size; ++i) {
    size_t length = iov[i].iov_len;
    if (offset >= length) {
      offset -= length;
      continue;
    }
    char* base = static_cast<char*>(iov[i].iov_base);
    if (base == nullptr) return -FI_EINVAL;
    size_t piece = std::min<size_t>(length - offset, size - done);
    if (int rc = copy(base + offset, done, piece); rc != 0) return rc;
    done += piece;
    offset = 0;
  }
  return static_cast<ssize_t>(done);
}

ssize_t BuiltinCopyFromIov(void* dest, size_t size, enum fi_hmem_iface iface,
                           uint64_t device, const struct iovec* iov,
                           size_t iov_count, uint64_t iov_offset) {
  char* out = static_cast<char*>(dest);
  // Host memory, the common case, skips the interface lookup.
  if (iface == FI_HMEM_SYSTEM) {
    return ForEachPiece(iov, iov_count, iov_offset, size,
                        [out](char* piece, size_t done, size_t length) {
                          memcpy(out + done, piece, length);
                          return 0;
                        });
  }
  absl::StatusOr<HmemCopyFunction> copy = HmemCopyFunctionOf(iface);
  if (!copy.ok()) return ToFiErrno(copy.status());
  return ForEachPiece(iov, iov_count, iov_offset, size,
                      [&](char* piece, size_t done, size_t length) {
                        return (*copy)(device, out + done, piece, length);
                      });
}

ssize_t BuiltinCopyToIov(enum fi_hmem_iface iface, uint64_t device,
                         const struct iovec* iov, size_t iov_count,
                         uint64_t iov_offset, const void* src, size_t size) {
  const char* in = static_cast<const char*>(src);
  if (iface == FI_HMEM_SYSTEM) {
    return ForEachPiece(iov, iov_count, iov_offset, size,
                        [in](char* piece, size_t done, size_t length) {
                          memcpy(piece, in + done, length);
                          return 0;
                        });
  }
  absl::StatusOr<HmemCopyFunction> copy = HmemCopyFunctionOf(iface);
  if (!copy.ok()) return ToFiErrno(copy.status());
  return ForEachPiece(iov, iov_count, iov_offset, size,
                      [&](char* piece, size_t done, size_t length) {
                        return (*copy)(device, piece, in + done, length);
                      });
}

}  // namespace

HmemCopier::HmemCopier()
    : copy_from_iov_(&BuiltinCopyFromIov), copy_to_iov_(&BuiltinCopyToIov) {}

bool HmemCopier::DirectSystemAccess() const {
  return copy_to_iov_.load(std::memory_order_acquire) == &BuiltinCopyToIov &&
         copy_from_iov_.load(std::memory_order_acquire) == &BuiltinCopyFromIov;
}

absl::Status HmemCopier::SetOverride(const struct fi_hmem_override_ops* ops) {
  if (ops == nullptr) return FiError(FI_EINVAL, "hmem override ops are NULL");
  if (ops->size != sizeof(struct fi_hmem_override_ops)) {
    return FiError(FI_EINVAL,
                   "fi_hmem_override_ops.size is not "
                   "sizeof(struct fi_hmem_override_ops)");
  }
  if (ops->copy_from_hmem_iov == nullptr || ops->copy_to_hmem_iov == nullptr) {
    return FiError(FI_EINVAL, "fi_hmem_override_ops has a NULL function");
  }
  copy_from_iov_.store(ops->copy_from_hmem_iov, std::memory_order_release);
  copy_to_iov_.store(ops->copy_to_hmem_iov, std::memory_order_release);
  overridden_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

ssize_t HmemCopier::CopyFromIov(void* dest, size_t size,
                                enum fi_hmem_iface iface, uint64_t device,
                                const struct iovec* iov, size_t iov_count,
                                uint64_t iov_offset) const {
  if ((iov == nullptr && iov_count > 0) || (dest == nullptr && size > 0)) {
    return -FI_EINVAL;
  }
  return copy_from_iov_.load(std::memory_order_acquire)(
      dest, size, iface, device, iov, iov_count, iov_offset);
}

ssize_t HmemCopier::CopyToIovThroughFunction(
    enum fi_hmem_iface iface, uint64_t device, const struct iovec* iov,
    size_t iov_count, uint64_t iov_offset, const void* src,
    size_t size) const {
  if ((iov == nullptr && iov_count > 0) || (src == nullptr && size > 0)) {
    return -FI_EINVAL;
  }
  return copy_to_iov_.load(std::memory_order_acquire)(
      iface, device, iov, iov_count, iov_offset, src, size);
}

}  // namespace fabric

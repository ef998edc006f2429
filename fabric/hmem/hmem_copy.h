// File: fabric/hmem/hmem_copy.h
//
// How providers move bytes between their own host buffers and the
// application's buffers, which may be device memory (fi_mr_attr::iface).
// Each domain holds one HmemCopier. It copies with the built-in memory
// interfaces (memory_interface.h) until the application installs its own
// functions with fi_set_ops(FI_SET_OPS_HMEM_OVERRIDE); from then on every
// copy, host memory included, goes through the application's functions.
//
//   HmemCopier copier;
//   // Gathers the message into a bounce buffer; bytes copied, or -fi_errno.
//   ssize_t n = copier.CopyFromIov(bounce, sizeof(bounce), FI_HMEM_CUDA,
//                                  device, msg->msg_iov, msg->iov_count, 0);
//   if (n < 0) return n;
#ifndef FABRIC_HMEM_HMEM_COPY_H_
#define FABRIC_HMEM_HMEM_COPY_H_

#include <rdma/fi_domain.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <string.h>

#include <algorithm>
#include <atomic>

#include "absl/status/status.h"

namespace fabric {

class HmemCopier {
 public:
  HmemCopier();
  HmemCopier(const HmemCopier&) = delete;
  HmemCopier& operator=(const HmemCopier&) = delete;

  // fi_set_ops(FI_SET_OPS_HMEM_OVERRIDE). FI_EINVAL unless `ops` is not null,
  // its size is sizeof(struct fi_hmem_override_ops) and both functions are
  // set. The functions are copied: the caller may free `ops`. Safe to call
  // while copies run, though a domain allows it only before its first
  // resource.
  absl::Status SetOverride(const struct fi_hmem_override_ops* ops);

  // True when the kernel may move bytes of FI_HMEM_SYSTEM memory directly
  // (socket reads and writes straight to the application's buffers): no
  // override is installed, so the copy would be the built-in memcpy anyway.
  bool DirectSystemAccess() const;

  // Copies into `dest` up to `size` bytes of the buffer `iov` describes,
  // starting `iov_offset` bytes into it; the buffer is memory of `iface` on
  // `device`. Returns the bytes copied: min(size, bytes past the offset), 0
  // when the offset is past the end; or a negative fi_errno: -FI_EINVAL for
  // a null `iov` with entries or a null `dest` with a size (checked before
  // an override runs), and from the built-in copies -FI_EINVAL for an entry
  // with a null base that the copy reaches or the interface's error.
  // Thread-safe.
  ssize_t CopyFromIov(void* dest, size_t size, enum fi_hmem_iface iface,
                      uint64_t device, const struct iovec* iov,
                      size_t iov_count, uint64_t iov_offset) const;

  // The reverse of CopyFromIov: `size` bytes of `src` into the buffer `iov`
  // describes, from `iov_offset` bytes into it. Host memory in one piece
  // with no override installed is a plain memcpy, inline: every received
  // message's payload takes this path.
  ssize_t CopyToIov(enum fi_hmem_iface iface, uint64_t device,
                    const struct iovec* iov, size_t iov_count,
                    uint64_t iov_offset, const void* src, size_t size) const {
    if (iface == FI_HMEM_SYSTEM && iov_count == 1 && iov != nullptr &&
        iov->iov_base != nullptr && iov_offset < iov->iov_len &&
        src != nullptr && !overridden_.load(std::memory_order_acquire)) {
      const size_t n = std::min<size_t>(size, iov->iov_len - iov_offset);
      memcpy(static_cast<char*>(iov->iov_base) + iov_offset, src, n);
      return static_cast<ssize_t>(n);
    }
    return CopyToIovThroughFunction(iface, device, iov, iov_count,
                                    iov_offset, src, size);
  }

 private:
  using CopyFromIovFunction =
      decltype(fi_hmem_override_ops::copy_from_hmem_iov);
  using CopyToIovFunction = decltype(fi_hmem_override_ops::copy_to_hmem_iov);

  ssize_t CopyToIovThroughFunction(enum fi_hmem_iface iface, uint64_t device,
                                   const struct iovec* iov, size_t iov_count,
                                   uint64_t iov_offset, const void* src,
                                   size_t size) const;

  // The functions in use, each replaced atomically, so that SetOverride
  // never tears a copy running beside it.
  std::atomic<CopyFromIovFunction> copy_from_iov_;
  std::atomic<CopyToIovFunction> copy_to_iov_;
  // Set once SetOverride installed the application's functions.
  std::atomic<bool> overridden_{false};
};

}  // namespace fabric

#endif  // FABRIC_HMEM_HMEM_COPY_H_

// File: fabric/providers/util/app_buffer.h
//
// An application's data buffer as a data transfer names it: iovec pieces,
// each with the memory it lives in (the HMEM iface and device of its
// fi_mr_desc, or host memory for a null desc). Providers move bytes between
// it and their own buffers only through the domain's HmemCopier, so that an
// FI_SET_OPS_HMEM_OVERRIDE sees every copy.
//
//   AppBuffer buffer;
//   absl::StatusOr<size_t> length = DescribeAppBuffer(
//       *domain, msg->msg_iov, msg->desc, msg->iov_count, &buffer);
//   ssize_t n = GatherAppBuffer(domain->copier, buffer, bounce, size);
#ifndef FABRIC_PROVIDERS_UTIL_APP_BUFFER_H_
#define FABRIC_PROVIDERS_UTIL_APP_BUFFER_H_

#include <rdma/fi_domain.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/util/domain.h"

namespace fabric {

struct AppBufferPiece {
  iovec iov;
  fi_hmem_iface iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
};

// Two pieces inline: most transfers name one buffer, and an AppBuffer is
// moved a few times per operation (each move copies the inline storage).
using AppBuffer = absl::InlinedVector<AppBufferPiece, 2>;

// Makes *buffer the `count` pieces at `iov` and returns their total
// length; `desc` (may be null, as may each entry) holds fi_mr_desc values
// of `domain`'s regions, read only where device regions can exist
// (FI_MR_HMEM) and looked up first (LiveRegion), never dereferenced
// blindly. FI_EINVAL status for a null `iov` with pieces, a piece with a
// null base and a length, a desc read that is not a region of `domain`,
// or lengths whose sum overflows. (An out parameter, not a
// returned AppBuffer: every transfer runs this, and moving an AppBuffer
// through a StatusOr cost a 64 B shm ping-pong 5% of its instructions.)
absl::StatusOr<size_t> DescribeAppBuffer(const UtilDomain& domain,
                                         const iovec* iov, void** desc,
                                         size_t count, AppBuffer* buffer);

// Whether the descriptors of transfers on `domain` say where memory lives:
// device regions can exist (FI_MR_HMEM) in the domain or, for a peer
// domain, its owner. Elsewhere every region is host memory and a desc is
// not read at all (fi_mr(3)).
inline bool DescriptorsNameMemory(const UtilDomain& domain) {
  auto device_regions = [](const UtilDomain* d) {
    return d != nullptr && d->info != nullptr &&
           (d->info->domain_attr->mr_mode & FI_MR_HMEM) != 0;
  };
  return device_regions(&domain) || device_regions(domain.peer_owner);
}

// DescribeAppBuffer for a transfer that names one host buffer (no device
// regions can exist, or it has no descriptor) into an empty `buffer`:
// the common case, inline and without a status (each transfer runs it).
// False, with *buffer untouched, where DescribeAppBuffer must decide.
inline bool DescribeOneHostBuffer(const UtilDomain& domain, const iovec* iov,
                                  void** desc, size_t count,
                                  AppBuffer* buffer, size_t* length) {
  if (count != 1 || iov == nullptr ||
      (iov->iov_base == nullptr && iov->iov_len > 0)) {
    return false;
  }
  if (desc != nullptr && desc[0] != nullptr &&
      DescriptorsNameMemory(domain)) {
    return false;
  }
  buffer->push_back(AppBufferPiece{*iov, FI_HMEM_SYSTEM, 0});
  *length = iov->iov_len;
  return true;
}

size_t AppBufferLength(const AppBuffer& buffer);

// Whether the bytes of `buffer` may be read and written directly (by the
// kernel, or a plain memcpy) instead of through `copier`: every piece is
// host memory and no HMEM override is installed, so that the copy would be
// the built-in memcpy anyway.
bool DirectlyAccessible(const HmemCopier& copier, const AppBuffer& buffer);

// Copies the first min(size, length) bytes of `buffer` into `dest`: the
// bytes copied, or a negative fi_errno (-FI_EIO for a short copy).
ssize_t GatherAppBuffer(const HmemCopier& copier, const AppBuffer& buffer,
                        void* dest, size_t size);

// Copies `size` bytes of `src` to the start of `buffer`, which must hold
// them: the bytes copied, or a negative fi_errno (-FI_EIO for a short copy).
ssize_t ScatterAppBuffer(const HmemCopier& copier, const AppBuffer& buffer,
                         const void* src, size_t size);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_APP_BUFFER_H_

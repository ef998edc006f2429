#include "fabric/providers/util/app_buffer.h"

#include <rdma/fi_errno.h>

#include <algorithm>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/mr.h"

namespace fabric {

namespace {

// Why piece `i` cannot be described; out of line, so that the loop's
// function keeps a small frame (it runs for every transfer).
ABSL_ATTRIBUTE_NOINLINE absl::Status PieceError(size_t i,
                                                absl::string_view what) {
  return FiError(FI_EINVAL, absl::StrCat("iov[", i, "] ", what));
}

}  // namespace

absl::StatusOr<size_t> DescribeAppBuffer(const UtilDomain& domain,
                                         const iovec* iov, void** desc,
                                         size_t count, AppBuffer* buffer) {
  if (iov == nullptr && count > 0) {
    return FiError(FI_EINVAL, "the iov array is NULL");
  }
  buffer->resize(count);
  AppBufferPiece* pieces = buffer->data();
  size_t total = 0;
  bool device_regions = DescriptorsNameMemory(domain);
  for (size_t i = 0; i < count; ++i) {
    if (iov[i].iov_base == nullptr && iov[i].iov_len > 0) {
      return PieceError(i, "has a NULL base");
    }
    if (iov[i].iov_len > SIZE_MAX - total) {
      return PieceError(i, "makes the lengths overflow");
    }
    total += iov[i].iov_len;
    pieces[i].iov = iov[i];
    if (!device_regions || desc == nullptr || desc[i] == nullptr) {
      pieces[i].iface = FI_HMEM_SYSTEM;
      pieces[i].device = 0;
      continue;
    }
    // Looked up before it is read: an application's garbage is refused.
    const UtilMr* mr = LiveRegion(desc[i]);
    if (mr == nullptr || !ServesDomain(mr->domain, domain)) {
      return PieceError(i, "has a desc that is not a memory region of this "
                           "domain");
    }
    pieces[i].iface = mr->iface;
    pieces[i].device = mr->device;
  }
  return total;
}

size_t AppBufferLength(const AppBuffer& buffer) {
  size_t total = 0;
  for (const AppBufferPiece& piece : buffer) total += piece.iov.iov_len;
  return total;
}

bool DirectlyAccessible(const HmemCopier& copier, const AppBuffer& buffer) {
  for (const AppBufferPiece& piece : buffer) {
    if (piece.iface != FI_HMEM_SYSTEM) return false;
  }
  return copier.DirectSystemAccess();
}

ssize_t GatherAppBuffer(const HmemCopier& copier, const AppBuffer& buffer,
                        void* dest, size_t size) {
  char* out = static_cast<char*>(dest);
  size_t done = 0;
  for (const AppBufferPiece& piece : buffer) {
    size_t want = std::min(piece.iov.iov_len, size - done);
    if (want == 0) continue;
    ssize_t copied = copier.CopyFromIov(out + done, want, piece.iface,
                                        piece.device, &piece.iov, 1, 0);
    if (copied < 0) return copied;
    if (static_cast<size_t>(copied) != want) return -FI_EIO;
    done += want;
  }
  return static_cast<ssize_t>(done);
}

ssize_t ScatterAppBuffer(const HmemCopier& copier, const AppBuffer& buffer,
                         const void* src, size_t size) {
  const char* in = static_cast<const char*>(src);
  size_t done = 0;
  for (const AppBufferPiece& piece : buffer) {
    size_t want = std::min(piece.iov.iov_len, size - done);
    if (want == 0) continue;
    ssize_t copied = copier.CopyToIov(piece.iface, piece.device, &piece.iov, 1,
                                      0, in + done, want);
    if (copied < 0) return copied;
    if (static_cast<size_t>(copied) != want) return -FI_EIO;
    done += want;
  }
  if (done != size) return -FI_EIO;
  return static_cast<ssize_t>(done);
}

}  // namespace fabric

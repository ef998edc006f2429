#include "fabric/hmem/counting_override_testing.h"

#include <string.h>
#include <sys/uio.h>

#include <algorithm>

namespace fabric {
namespace {

// Copies `size` bytes between `flat` and the iov from `offset` on (to_iov:
// into the iov); the bytes copied.
size_t CopyIov(const iovec* iov, size_t count, uint64_t offset, char* flat,
               size_t size, bool to_iov) {
  size_t done = 0;
  for (size_t i = 0; i < count && done < size; ++i) {
    if (offset >= iov[i].iov_len) {
      offset -= iov[i].iov_len;
      continue;
    }
    size_t n = std::min<size_t>(iov[i].iov_len - offset, size - done);
    char* piece = static_cast<char*>(iov[i].iov_base) + offset;
    if (to_iov) {
      memcpy(piece, flat + done, n);
    } else {
      memcpy(flat + done, piece, n);
    }
    done += n;
    offset = 0;
  }
  return done;
}

ssize_t CopyFrom(void* dest, size_t size, fi_hmem_iface iface, uint64_t,
                 const iovec* iov, size_t count, uint64_t offset) {
  ++CountingOverride::from_calls;
  if (iface != FI_HMEM_SYSTEM) ++CountingOverride::non_system;
  size_t done =
      CopyIov(iov, count, offset, static_cast<char*>(dest), size, false);
  CountingOverride::from_bytes += done;
  return static_cast<ssize_t>(done);
}

ssize_t CopyTo(fi_hmem_iface iface, uint64_t, const iovec* iov, size_t count,
               uint64_t offset, const void* src, size_t size) {
  ++CountingOverride::to_calls;
  if (iface != FI_HMEM_SYSTEM) ++CountingOverride::non_system;
  size_t done = CopyIov(iov, count, offset,
                        const_cast<char*>(static_cast<const char*>(src)), size,
                        true);
  CountingOverride::to_bytes += done;
  return static_cast<ssize_t>(done);
}

}  // namespace

std::atomic<int> CountingOverride::from_calls{0};
std::atomic<size_t> CountingOverride::from_bytes{0};
std::atomic<int> CountingOverride::to_calls{0};
std::atomic<size_t> CountingOverride::to_bytes{0};
std::atomic<int> CountingOverride::non_system{0};

fi_hmem_override_ops CountingOverride::Ops() {
  return {sizeof(fi_hmem_override_ops), CopyFrom, CopyTo};
}

void CountingOverride::Reset() {
  from_calls = 0;
  from_bytes = 0;
  to_calls = 0;
  to_bytes = 0;
  non_system = 0;
}

}  // namespace fabric

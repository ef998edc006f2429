#include "fabric/providers/stream/byte_stream.h"

#include <errno.h>

namespace fabric {
namespace stream {

ssize_t ByteStream::Pull(const iovec*, size_t, const iovec*, size_t) {
  return -ENOSYS;
}

ssize_t ByteStream::PullFrom(const iovec* to, size_t to_count,
                             const RmaDescriptor* from, size_t from_count) {
  iovec remote[kMaxRmaCount];
  if (from_count > kMaxRmaCount) return -EINVAL;
  for (size_t i = 0; i < from_count; ++i) {
    remote[i] = {reinterpret_cast<void*>(from[i].addr), from[i].len};
  }
  return Pull(to, to_count, remote, from_count);
}

absl::StatusOr<std::unique_ptr<PullExposure>> ByteStream::Expose(
    const iovec* iov, size_t count, RmaDescriptor* out) {
  for (size_t i = 0; i < count; ++i) {
    out[i] = {reinterpret_cast<uint64_t>(iov[i].iov_base), iov[i].iov_len, 0};
  }
  return nullptr;
}

ssize_t ByteStream::Push(const iovec*, size_t, const iovec*, size_t) {
  return -ENOSYS;
}

}  // namespace stream
}  // namespace fabric

#include "fabric/providers/tcp/tcp_stream.h"

#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace tcp {

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

SocketStream::~SocketStream() { close(fd_); }

ssize_t SocketStream::Write(const iovec* iov, size_t count) {
  // MSG_NOSIGNAL: a peer gone away is an EPIPE error, not a SIGPIPE.
  constexpr int kFlags = MSG_NOSIGNAL | MSG_DONTWAIT;
  // A small message (header and payload) goes out of one buffer with
  // send: copying a few hundred bytes costs less than the kernel's taking
  // in a msghdr and an iovec array.
  constexpr size_t kGatherMax = 256;
  size_t total = 0;
  for (size_t i = 0; i < count && total <= kGatherMax; ++i) {
    total += iov[i].iov_len;
  }
  ssize_t n;
  if (count == 1) {
    n = Send(fd_, iov[0].iov_base, iov[0].iov_len, kFlags);
  } else if (count > 1 && total <= kGatherMax) {
    char gathered[kGatherMax];
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
      if (iov[i].iov_len == 0) continue;
      memcpy(gathered + at, iov[i].iov_base, iov[i].iov_len);
      at += iov[i].iov_len;
    }
    n = Send(fd_, gathered, at, kFlags);
  } else {
    msghdr msg = {};
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = count;
    n = SendMsg(fd_, &msg, kFlags);
  }
  if (n < 0) return errno == EINTR ? -EAGAIN : -errno;
  return n;
}

ssize_t SocketStream::Read(const iovec* iov, size_t count) {
  ssize_t n;
  if (count == 1) {
    n = Recv(fd_, iov[0].iov_base, iov[0].iov_len, MSG_DONTWAIT);
  } else {
    n = ReadV(fd_, iov, static_cast<int>(count));
  }
  if (n < 0) return errno == EINTR || errno == EWOULDBLOCK ? -EAGAIN : -errno;
  return n;
}

void SocketStream::Shutdown() { shutdown(fd_, SHUT_RDWR); }

void SocketStream::AcknowledgeNow() {
  // The kernel clears the flag again when it sees request/response
  // traffic, so it is set for each read that leaves bytes to come.
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

}  // namespace tcp
}  // namespace fabric

#include "fabric/providers/tcp/tcp_socket_stream.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace tcp {

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

#include "fabric/providers/tcp/tcp_stream.h"

#include <errno.h>
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

SocketStream::~SocketStream() { close(fd_); }

ssize_t SocketStream::Write(const iovec* iov, size_t count) {
  msghdr msg = {};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = count;
  // MSG_NOSIGNAL: a peer gone away is an EPIPE error, not a SIGPIPE.
  ssize_t n = SendMsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) return errno == EINTR ? -EAGAIN : -errno;
  return n;
}

ssize_t SocketStream::Read(const iovec* iov, size_t count) {
  ssize_t n;
  if (count == 1) {
    msghdr msg = {};
    msg.msg_iov = const_cast<iovec*>(iov);
    msg.msg_iovlen = 1;
    n = RecvMsg(fd_, &msg, MSG_DONTWAIT);
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

#include "fabric/providers/tcp/tcp_socket.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/tcp/tcp_fd_limit.h"
#include "fabric/providers/util/ip_socket.h"

namespace fabric {
namespace tcp {
namespace {

absl::Status Errno(int err, const std::string& what) {
  if (IsOutOfFds(err)) {
    return FiError(FI_EMFILE, absl::StrCat(what, ": ", strerror(err), " (",
                                           FdLimitText(), ")"));
  }
  int code = err == ECONNREFUSED ? FI_ECONNREFUSED
             : err == EADDRINUSE ? FI_EADDRINUSE
                                 : err;
  return FiError(code, absl::StrCat(what, ": ", strerror(err)));
}

}  // namespace

absl::StatusOr<int> StartConnect(const IpAddress& peer,
                                 const std::optional<IpAddress>& local,
                                 uint32_t tclass) {
  int fd = socket(peer.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  0);
  if (fd < 0) return Errno(errno, "socket");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  absl::Status status = ApplyTrafficClass(fd, peer.family(), tclass);
  if (status.ok() && local.has_value() && local->family() == peer.family() &&
      bind(fd, local->sockaddr_ptr(), local->length()) != 0) {
    status = Errno(errno, absl::StrCat("bind ", FormatAddrStr(*local)));
  }
  if (status.ok() && connect(fd, peer.sockaddr_ptr(), peer.length()) != 0 &&
      errno != EINPROGRESS) {
    status = Errno(errno, absl::StrCat("connect ", FormatAddrStr(peer)));
  }
  if (!status.ok()) {
    close(fd);
    return status;
  }
  return fd;
}

absl::Status FinishConnect(int fd, int timeout_ms) {
  pollfd ready = {fd, POLLOUT, 0};
  int rc = poll(&ready, 1, timeout_ms);
  if (rc == 0) return FiError(FI_ETIMEDOUT, "connect: timed out");
  if (rc < 0) return Errno(errno, "poll");
  int error = 0;
  socklen_t len = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  return error == 0 ? absl::OkStatus() : Errno(error, "connect");
}

absl::StatusOr<int> BoundSocket(const IpAddress& address) {
  int fd = socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  0);
  if (fd < 0) return Errno(errno, "socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, address.sockaddr_ptr(), address.length()) != 0) {
    int err = errno;
    close(fd);
    return Errno(err, absl::StrCat("bind ", FormatAddrStr(address)));
  }
  return fd;
}

int AcceptSocket(int listen_fd, const fi_provider* log) {
  int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
  }
  int err = errno;
  if (IsOutOfFds(err)) {
    RefuseConnection(listen_fd, log);
  } else if (err != EAGAIN && err != EWOULDBLOCK) {
    FI_WARN(log, FI_LOG_EP_CTRL, "accept on listener %d: %s\n", listen_fd,
            strerror(err));
  }
  return -1;
}

}  // namespace tcp
}  // namespace fabric

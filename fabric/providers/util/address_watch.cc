#include "fabric/providers/util/address_watch.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fabric {

AddressWatch::~AddressWatch() {
  if (fd_ >= 0 && owner_ == getpid()) close(fd_);
}

bool AddressWatch::Open() {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  NETLINK_ROUTE);
  if (fd < 0) return false;
  sockaddr_nl local = {};
  local.nl_family = AF_NETLINK;
  local.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    close(fd);
    return false;
  }
  fd_ = fd;
  owner_ = getpid();
  return true;
}

bool AddressWatch::Changed() {
  if (fd_ < 0 || owner_ != getpid()) {
    // A forked child shares the parent's socket: leave it to the parent.
    fd_ = -1;
    Open();
    return true;
  }
  bool changed = false;
  char buffer[8192];
  for (;;) {
    ssize_t n = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      changed = true;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return changed;
    } else {
      // ENOBUFS (notifications were dropped) or a broken socket: assume a
      // change, and start over with a fresh socket next time.
      close(fd_);
      fd_ = -1;
      return true;
    }
  }
}

}  // namespace fabric

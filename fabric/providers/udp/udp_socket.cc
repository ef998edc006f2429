#include "fabric/providers/udp/udp_socket.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <rdma/fabric.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/ip_socket.h"

namespace fabric {
namespace {

absl::Status Errno(const char* call) {
  int err = errno;
  return FiError(err, absl::StrCat(call, ": ", strerror(err)));
}

absl::Status SetIntOption(int fd, int level, int name, int value,
                          const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) {
    return Errno(what);
  }
  return absl::OkStatus();
}

absl::Status Configure(int fd, const IpAddress& address, uint32_t tclass) {
  bool v6 = address.family() == AF_INET6;
  if (v6) {
    // A wildcard IPv6 socket would also take IPv4 datagrams, whose
    // v4-mapped sources match no IPv4 entry of the AV.
    FABRIC_RETURN_IF_ERROR(SetIntOption(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1,
                                        "setsockopt(IPV6_V6ONLY)"));
  }
  FABRIC_RETURN_IF_ERROR(ApplyTrafficClass(fd, address.family(), tclass));
  if (bind(fd, address.sockaddr_ptr(), address.length()) != 0) {
    return Errno("bind");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> OpenUdpSocket(const IpAddress& address, uint32_t tclass) {
  int fd = socket(address.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  IPPROTO_UDP);
  if (fd < 0) return Errno("socket");
  absl::Status status = Configure(fd, address, tclass);
  if (!status.ok()) {
    close(fd);
    return status;
  }
  return fd;
}

}  // namespace fabric

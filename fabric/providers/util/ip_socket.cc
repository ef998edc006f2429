#include "fabric/providers/util/ip_socket.h"

#include <errno.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

absl::StatusOr<int> DscpOf(uint32_t tclass) {
  if (tclass & FI_TC_DSCP) {
    if ((tclass & 0xff) > 63) {
      return FiError(FI_EINVAL, absl::StrCat("DSCP ", tclass & 0xff));
    }
    return static_cast<int>(tclass & 0x3f);
  }
  switch (tclass) {
    case FI_TC_BEST_EFFORT:
      return 0;
    case FI_TC_LOW_LATENCY:
      return 46;
    case FI_TC_DEDICATED_ACCESS:
      return 34;
    case FI_TC_BULK_DATA:
      return 10;
    case FI_TC_SCAVENGER:
      return 8;
    case FI_TC_NETWORK_CTRL:
      return 48;
    default:
      return FiError(FI_EINVAL, absl::StrCat("unknown traffic class 0x",
                                             absl::Hex(tclass)));
  }
}

absl::StatusOr<IpAddress> Name(int fd, bool peer) {
  sockaddr_storage storage = {};
  socklen_t len = sizeof(storage);
  sockaddr* sa = reinterpret_cast<sockaddr*>(&storage);
  int rc = peer ? getpeername(fd, sa, &len) : getsockname(fd, sa, &len);
  if (rc != 0) {
    return FiError(errno == ENOTCONN ? FI_ENOTCONN : errno,
                   absl::StrCat(peer ? "getpeername: " : "getsockname: ",
                                strerror(errno)));
  }
  return IpAddress::FromSockaddr(sa, len);
}

}  // namespace

absl::Status ApplyTrafficClass(int fd, int family, uint32_t tclass) {
  if (tclass == FI_TC_UNSPEC) return absl::OkStatus();
  absl::StatusOr<int> dscp = DscpOf(tclass);
  if (!dscp.ok()) return dscp.status();
  int tos = *dscp << 2;
  int rc = family == AF_INET6
               ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos))
               : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
  if (rc != 0) {
    return FiError(errno, absl::StrCat("setting traffic class: ",
                                       strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<IpAddress> LocalAddress(int fd) { return Name(fd, false); }
absl::StatusOr<IpAddress> PeerAddress(int fd) { return Name(fd, true); }

int CopyAddressOut(const IpAddress& address, uint32_t addr_format, void* addr,
                   size_t* addrlen) {
  if (addrlen == nullptr) return -FI_EINVAL;
  std::string text;
  const void* bytes = address.sockaddr_ptr();
  size_t needed = address.length();
  switch (addr_format) {
    case FI_SOCKADDR:
      break;
    case FI_SOCKADDR_IN:
      if (address.family() != AF_INET) return -FI_EINVAL;
      break;
    case FI_SOCKADDR_IN6:
      if (address.family() != AF_INET6) return -FI_EINVAL;
      break;
    case FI_ADDR_STR:
      text = FormatAddrStr(address);
      bytes = text.c_str();
      needed = text.size() + 1;
      break;
    default:
      return -FI_EINVAL;
  }
  size_t room = *addrlen;
  *addrlen = needed;
  if (room < needed) return -FI_ETOOSMALL;
  if (addr == nullptr) return -FI_EINVAL;
  memcpy(addr, bytes, needed);
  return 0;
}

std::vector<char> AddressBytes(const IpAddress& address,
                               uint32_t addr_format) {
  size_t len = 0;
  CopyAddressOut(address, addr_format, nullptr, &len);
  std::vector<char> bytes(len);
  if (CopyAddressOut(address, addr_format, bytes.data(), &len) != 0) {
    bytes.clear();
  }
  return bytes;
}

size_t UserAddressLength(uint32_t addr_format, const void* addr) {
  if (addr == nullptr) return 0;
  switch (addr_format) {
    case FI_SOCKADDR_IN:
      return sizeof(sockaddr_in);
    case FI_SOCKADDR_IN6:
      return sizeof(sockaddr_in6);
    case FI_SOCKADDR: {
      sa_family_t family;
      memcpy(&family, addr, sizeof(family));
      return family == AF_INET    ? sizeof(sockaddr_in)
             : family == AF_INET6 ? sizeof(sockaddr_in6)
                                  : 0;
    }
    case FI_ADDR_STR:
      return strnlen(static_cast<const char*>(addr), 4096) + 1;
    default:
      return 0;
  }
}

}  // namespace fabric

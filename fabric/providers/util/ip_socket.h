// File: fabric/providers/util/ip_socket.h
//
// Socket details the IP providers share: the domain's traffic class on a
// socket, the addresses a socket is bound or connected to, and handing an
// address to the application in its address format (fi_getname,
// fi_getpeer, fi_av_lookup style: -FI_ETOOSMALL with the needed length).
#ifndef FABRIC_PROVIDERS_UTIL_IP_SOCKET_H_
#define FABRIC_PROVIDERS_UTIL_IP_SOCKET_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"

namespace fabric {

// Sets IP_TOS / IPV6_TCLASS from an fi_domain_attr::tclass value:
// FI_TC_DSCP values give their DSCP; the labels map to DSCP classes
// (BEST_EFFORT 0, LOW_LATENCY EF 46, DEDICATED_ACCESS AF41 34, BULK_DATA
// AF11 10, SCAVENGER CS1 8, NETWORK_CTRL CS6 48). FI_TC_UNSPEC leaves the
// socket alone; an unknown value is FI_EINVAL.
absl::Status ApplyTrafficClass(int fd, int family, uint32_t tclass);

absl::StatusOr<IpAddress> LocalAddress(int fd);
absl::StatusOr<IpAddress> PeerAddress(int fd);

// Writes `address` to addr in `addr_format` (FI_SOCKADDR, FI_SOCKADDR_IN,
// FI_SOCKADDR_IN6: the sockaddr; FI_ADDR_STR: the NUL-terminated string).
// *addrlen is set to the length needed; -FI_ETOOSMALL when it exceeds the
// buffer (nothing written), -FI_EINVAL for a format the address cannot take.
int CopyAddressOut(const IpAddress& address, uint32_t addr_format, void* addr,
                   size_t* addrlen);
// `address` as CopyAddressOut writes it in `addr_format`; empty when it
// cannot be written in that format.
std::vector<char> AddressBytes(const IpAddress& address, uint32_t addr_format);

// The length of the application's address at `addr` in `addr_format`; 0
// when it cannot be one.
size_t UserAddressLength(uint32_t addr_format, const void* addr);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_IP_SOCKET_H_

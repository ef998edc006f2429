// File: fabric/providers/udp/udp_socket.h
//
// The UDP socket behind a udp endpoint: nonblocking, bound to the endpoint's
// source address, with the IP traffic class the application asked for.
#ifndef FABRIC_PROVIDERS_UDP_UDP_SOCKET_H_
#define FABRIC_PROVIDERS_UDP_UDP_SOCKET_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"

namespace fabric {

// A nonblocking UDP socket bound to `address` (port 0: an ephemeral port);
// `tclass` (an FI_TC_* value) sets IP_TOS or IPV6_TCLASS as
// ApplyTrafficClass (util/ip_socket.h) does. The fd, or the failing call's errno as an fi_errno status.
absl::StatusOr<int> OpenUdpSocket(const IpAddress& address, uint32_t tclass);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_SOCKET_H_

// File: fabric/providers/udp/udp_limits.h
//
// What one UDP datagram and one udp data transfer can carry.
#ifndef FABRIC_PROVIDERS_UDP_UDP_LIMITS_H_
#define FABRIC_PROVIDERS_UDP_UDP_LIMITS_H_

#include <cstddef>

namespace fabric {

// The largest UDP payload over IPv4: 65535 - 20 (IP header) - 8 (UDP header).
// IPv6 allows 20 bytes more; one value serves both families.
inline constexpr size_t kUdpMaxMsgSize = 65507;

// The most iovec pieces one send or receive takes.
inline constexpr size_t kUdpIovLimit = 4;

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_LIMITS_H_

// File: fabric/providers/util/interfaces.h
//
// The machine's usable IP interfaces, as the IP providers (tcp, udp) report
// them: a domain per interface, a fabric per IP network.
#ifndef FABRIC_PROVIDERS_UTIL_INTERFACES_H_
#define FABRIC_PROVIDERS_UTIL_INTERFACES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"

namespace fabric {

// One address of one interface that is up.
struct IpInterface {
  std::string name;     // "eth0": the domain name
  IpAddress address;    // port 0
  int prefix_length;    // from the netmask
  std::string network;  // "192.0.2.0/24": the fabric name
  bool loopback;
};

// Every address of every interface that is up, non-loopback interfaces first,
// IPv4 before IPv6 within an interface. `only` (comma-separated interface
// names, empty for all) restricts the list, as the FI_<PROV>_IFACE parameter
// does.
absl::StatusOr<std::vector<IpInterface>> ListIpInterfaces(
    const std::string& only);

// "192.0.2.0/24" for 192.0.2.7 with prefix 24; "fe80::/64" for IPv6.
std::string NetworkName(const IpAddress& address, int prefix_length);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_INTERFACES_H_

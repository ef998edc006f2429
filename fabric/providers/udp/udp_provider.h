// File: fabric/providers/udp/udp_provider.h
//
// The udp provider: DGRAM endpoints over UDP sockets (udp_endpoint.h), a
// domain per network interface and a fabric per IP network.
#ifndef FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_
#define FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeUdpProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_

// File: fabric/providers/udp/udp_provider.h
//
// The udp provider: DGRAM endpoints over UDP sockets, a domain per network
// interface and a fabric per IP network. Discovery and fabrics are
// implemented; domains and the data path arrive with their own work and return
// -FI_ENOSYS until then.
#ifndef FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_
#define FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeUdpProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_PROVIDER_H_

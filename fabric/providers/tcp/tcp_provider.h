// File: fabric/providers/tcp/tcp_provider.h
//
// The tcp provider: reliable MSG and RDM endpoints over TCP sockets, a domain
// per network interface and a fabric per IP network. Discovery and fabrics
// are implemented; domains and the data path arrive with their own work and
// return -FI_ENOSYS until then.
#ifndef FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_
#define FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeTcpProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_

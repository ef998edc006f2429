// File: fabric/providers/tcp/tcp_provider.h
//
// The tcp provider: reliable MSG and RDM endpoints over TCP sockets, a domain
// per network interface and a fabric per IP network. Its RDM endpoints
// reach peers on the same host through the shm provider given to it (null:
// none), unless FI_TCP_SHM is 0 (tcp_local_path.h).
#ifndef FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_
#define FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeTcpProvider(const Provider* shm);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_PROVIDER_H_

// File: fabric/providers/shm/shm_provider.h
//
// The shm provider: FI_EP_RDM endpoints between processes of one host
// (FI_LOCAL_COMM) over shared memory (shm_rdm_ep.h). One fabric and one
// domain, both named "shm". Endpoint addresses are IP socket addresses on
// the loopback interface that only name endpoints (FI_SOCKADDR_IN,
// FI_SOCKADDR_IN6, FI_SOCKADDR, FI_ADDR_STR). fi_getinfo offers nothing,
// and says why in a log line, when /dev/shm lacks the space one endpoint
// and one connection need.
//
// Parameters: FI_SHM_RING_SIZE, each connection ring's bytes (a power of
// two from 4 KiB to 64 MiB; default 64 KiB); FI_SHM_CMA, whether large
// messages may be copied with cross-memory attach (default yes).
#ifndef FABRIC_PROVIDERS_SHM_SHM_PROVIDER_H_
#define FABRIC_PROVIDERS_SHM_SHM_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeShmProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_PROVIDER_H_

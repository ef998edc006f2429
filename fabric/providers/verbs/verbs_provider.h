// File: fabric/providers/verbs/verbs_provider.h
//
// The verbs provider (InfiniBand / RoCE through rdma-core): FI_EP_MSG
// endpoints over RC queue pairs connected with librdmacm
// (verbs_msg_ep.h), one fi_info per active device port and address
// (verbs_attr.h). Without RDMA devices or without libibverbs (as on
// machines without such hardware) it reports nothing and logs why at
// debug level. FI_EP_RDM endpoints run the stream data path over RC
// endpoints (fabric/providers/rxm/rxm_ep.h) on the same addresses.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeVerbsProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

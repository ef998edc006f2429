// File: fabric/providers/verbs/verbs_provider.h
//
// The verbs provider (InfiniBand / RoCE through rdma-core). In this version it
// only detects devices: without RDMA devices (as on machines without such
// hardware) it reports nothing and logs why at debug level; with devices it
// still reports nothing and says at info level that the verbs data path is not
// part of this build yet.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeVerbsProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

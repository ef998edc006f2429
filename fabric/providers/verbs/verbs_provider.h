// File: fabric/providers/verbs/verbs_provider.h
//
// The verbs provider (InfiniBand / RoCE through rdma-core). In this version
// it finds the device ports (verbs_devices.h) and what each would offer
// (verbs_attr.h), and reports none of it: its endpoints are not part of
// this build yet, so fi_fabric could not serve them. Without RDMA devices
// or without libibverbs (as on machines without such hardware) it logs why
// at debug level; with devices it logs at info level what they would
// offer.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

#include <memory>

#include "fabric/providers/provider.h"

namespace fabric {

std::unique_ptr<Provider> MakeVerbsProvider();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_PROVIDER_H_

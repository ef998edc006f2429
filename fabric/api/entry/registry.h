// File: fabric/api/entry/registry.h
//
// The compiled-in providers. Every provider is listed once, in registry.cc;
// there are no plug-ins to scan, so the first fi_getinfo of a process costs no
// dlopen. The configuration (FI_PROVIDER, the config file) decides which are
// enabled and in which order they are asked.
#ifndef FABRIC_API_ENTRY_REGISTRY_H_
#define FABRIC_API_ENTRY_REGISTRY_H_

#include <rdma/providers/fi_prov.h>

#include <vector>

#include "absl/strings/string_view.h"
#include "fabric/providers/provider.h"

namespace fabric {

// Enabled providers, highest priority first. Built on first use; stable for
// the life of the process.
const std::vector<const Provider*>& EnabledProviders();

// The enabled provider named `name` (case-insensitive), or null.
const Provider* FindEnabledProvider(absl::string_view name);

// The fi_provider the core logs and defines parameters under.
const fi_provider* CoreProvider();

}  // namespace fabric

#endif  // FABRIC_API_ENTRY_REGISTRY_H_

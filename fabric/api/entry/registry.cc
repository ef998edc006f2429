#include "fabric/api/entry/registry.h"

#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "fabric/api/config/settings.h"
#include "fabric/providers/shm/shm_provider.h"
#include "fabric/providers/tcp/tcp_provider.h"
#include "fabric/providers/udp/udp_provider.h"
#include "fabric/providers/verbs/verbs_provider.h"

namespace fabric {
namespace {

// The one list of compiled-in providers.
std::vector<std::unique_ptr<Provider>> BuiltInProviders() {
  std::vector<std::unique_ptr<Provider>> providers;
  std::unique_ptr<Provider> shm = MakeShmProvider();
  providers.push_back(MakeVerbsProvider());
  providers.push_back(MakeTcpProvider(shm.get()));  // for local peers
  providers.push_back(std::move(shm));
  providers.push_back(MakeUdpProvider());
  return providers;
}

struct Registry {
  std::vector<std::unique_ptr<Provider>> all;
  std::vector<const Provider*> enabled;
};

const Registry& GetRegistry() {
  static const Registry* registry = [] {
    auto* r = new Registry{BuiltInProviders(), {}};
    for (const auto& provider : r->all) {
      if (ProviderEnabled(provider->name())) {
        r->enabled.push_back(provider.get());
      } else {
        FI_INFO(CoreProvider(), FI_LOG_CORE,
                "provider %s disabled by configuration\n", provider->name());
      }
    }
    std::stable_sort(r->enabled.begin(), r->enabled.end(),
                     [](const Provider* a, const Provider* b) {
                       return ProviderPriority(a->name(),
                                               a->default_priority()) >
                              ProviderPriority(b->name(),
                                               b->default_priority());
                     });
    return r;
  }();
  return *registry;
}

std::vector<std::string> ProviderNames() {
  std::vector<std::string> names;
  for (const auto& provider : GetRegistry().all) {
    names.emplace_back(provider->name());
  }
  return names;
}

// Registered when the library loads, so the configuration can check provider
// names and parameters (and fi_getparams list them) before any fi_getinfo.
[[maybe_unused]] const bool kCatalogRegistered =
    (SetProviderCatalog(&ProviderNames), true);

}  // namespace

const std::vector<const Provider*>& EnabledProviders() {
  return GetRegistry().enabled;
}

const Provider* FindEnabledProvider(absl::string_view name) {
  for (const Provider* provider : EnabledProviders()) {
    if (absl::EqualsIgnoreCase(provider->name(), name)) return provider;
  }
  return nullptr;
}

const fi_provider* CoreProvider() {
  static const fi_provider core = [] {
    fi_provider p = {};
    p.version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    p.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
    p.name = "core";
    return p;
  }();
  return &core;
}

}  // namespace fabric

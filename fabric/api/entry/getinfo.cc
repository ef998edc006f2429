#include "fabric/api/entry/getinfo.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/settings.h"
#include "fabric/api/core/address.h"
#include "fabric/api/core/export.h"
#include "fabric/api/core/hints.h"
#include "fabric/api/core/status.h"
#include "fabric/api/entry/registry.h"
#include "fabric/providers/util/live_objects.h"

namespace fabric {
namespace {

constexpr uint64_t kGetInfoFlags = FI_NUMERICHOST | FI_PROV_ATTR_ONLY |
                                   FI_SOURCE;

// The opened fabric / domain the hints restrict results to, if any.
struct InstanceFilter {
  std::string provider;       // empty: any
  std::string fabric_name;    // empty: any
  std::string domain_name;    // empty: any
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
};

absl::StatusOr<InstanceFilter> InstancesFromHints(const fi_info* hints) {
  InstanceFilter filter;
  if (hints == nullptr) return filter;
  if (hints->fabric_attr != nullptr && hints->fabric_attr->fabric != nullptr) {
    fid_fabric* fabric = hints->fabric_attr->fabric;
    if (!IsLiveObject(fabric, FI_CLASS_FABRIC)) {
      return FiError(FI_EINVAL, "invalid hints: fabric_attr->fabric is not "
                                "an open fabric");
    }
    filter.fabric = fabric;
    filter.provider = LiveObjectProvider(fabric);
    filter.fabric_name = LiveObjectName(fabric);
  }
  if (hints->domain_attr != nullptr && hints->domain_attr->domain != nullptr) {
    fid_domain* domain = hints->domain_attr->domain;
    if (!IsLiveObject(domain, FI_CLASS_DOMAIN)) {
      return FiError(FI_EINVAL, "invalid hints: domain_attr->domain is not "
                                "an open domain");
    }
    std::string provider = LiveObjectProvider(domain);
    if (!filter.provider.empty() && filter.provider != provider) {
      return FiError(FI_EINVAL, "invalid hints: domain_attr->domain and "
                                "fabric_attr->fabric belong to different "
                                "providers");
    }
    // A domain lies on one fabric: results are restricted to that one too.
    auto* parent = reinterpret_cast<fid_fabric*>(LiveObjectParent(domain));
    if (filter.fabric != nullptr && filter.fabric != parent) {
      return FiError(FI_EINVAL, "invalid hints: domain_attr->domain is not "
                                "open on fabric_attr->fabric");
    }
    filter.domain = domain;
    filter.provider = provider;
    filter.domain_name = LiveObjectName(domain);
    filter.fabric = parent;
    filter.fabric_name = LiveObjectName(parent);
  }
  return filter;
}

absl::Status CheckInstance(const InstanceFilter& filter, const fi_info& info) {
  if (!filter.fabric_name.empty() &&
      filter.fabric_name != info.fabric_attr->name) {
    return FiError(FI_ENODATA, absl::StrCat("fabric_attr->fabric is fabric '",
                                            filter.fabric_name, "'"));
  }
  if (!filter.domain_name.empty() &&
      filter.domain_name != info.domain_attr->name) {
    return FiError(FI_ENODATA, absl::StrCat("domain_attr->domain is domain '",
                                            filter.domain_name, "'"));
  }
  return absl::OkStatus();
}

// Points the result at the instances the application already opened.
void ReferenceInstances(const InstanceFilter& filter, const Provider& provider,
                        const GetInfoRequest& request, fi_info* info) {
  const fi_info* hints = request.hints;
  info->fabric_attr->fabric =
      filter.fabric != nullptr
          ? filter.fabric
          : reinterpret_cast<fid_fabric*>(FirstLiveObject(
                FI_CLASS_FABRIC, provider.name(), info->fabric_attr->name));
  // A domain of that name counts only if it is open on that fabric.
  info->domain_attr->domain =
      filter.domain != nullptr
          ? filter.domain
          : info->fabric_attr->fabric == nullptr
                ? nullptr
                : reinterpret_cast<fid_domain*>(FirstLiveObject(
                      FI_CLASS_DOMAIN, provider.name(),
                      info->domain_attr->name, &info->fabric_attr->fabric->fid));
  // fi_fabric(3): the version the application asked fi_getinfo for.
  info->fabric_attr->api_version = request.version;
  // A passive endpoint in hints->handle is handed back (fi_getinfo(3));
  // other handle values are not ours to interpret.
  info->handle = nullptr;
  if (hints != nullptr && hints->handle != nullptr &&
      IsLiveObject(hints->handle, FI_CLASS_PEP)) {
    info->handle = hints->handle;
  }
}

absl::Status ValidateArguments(uint32_t version, const char* node,
                               const char* service, uint64_t flags) {
  FABRIC_RETURN_IF_ERROR(CheckVersion(version));
  if ((flags & ~kGetInfoFlags) != 0) {
    return FiError(FI_EBADFLAGS,
                   absl::StrCat("unknown fi_getinfo flags 0x",
                                absl::Hex(flags & ~kGetInfoFlags)));
  }
  if ((flags & FI_SOURCE) != 0 && node == nullptr && service == nullptr) {
    return FiError(FI_EINVAL, "FI_SOURCE needs node and/or service");
  }
  if (node != nullptr && LooksLikeAddrStr(node)) {
    if (service != nullptr) {
      return FiError(FI_EINVAL, "service must be NULL when node is an "
                                "FI_ADDR_STR address");
    }
    absl::StatusOr<AddrStr> parsed = ParseAddrStr(node);
    if (!parsed.ok()) return parsed.status();
  }
  return absl::OkStatus();
}

bool ProviderSelected(const Provider& provider, const fi_info* hints,
                      const InstanceFilter& filter) {
  if (!filter.provider.empty() && filter.provider != provider.name()) {
    return false;
  }
  return hints == nullptr || hints->fabric_attr == nullptr ||
         ProviderNameMatches(hints->fabric_attr->prov_name, provider.name());
}

// The attribute defaults configured for a provider (FI_<PROV>_ATTR_*, or
// the config file's provider { attrs {} }, read once per provider and
// fi_getinfo) in place of its built-in ones; sizes at most what it offers
// (a default cannot promise more).
void ApplyAttrOverrides(const AttrOverrides& attrs, fi_info* info) {
  auto lower = [](const std::optional<size_t>& value, size_t* field) {
    if (value.has_value() && *value < *field) *field = *value;
  };
  if (info->tx_attr != nullptr) {
    lower(attrs.tx_size, &info->tx_attr->size);
    lower(attrs.inject_size, &info->tx_attr->inject_size);
  }
  if (info->rx_attr != nullptr) lower(attrs.rx_size, &info->rx_attr->size);
  if (info->ep_attr != nullptr) {
    lower(attrs.max_msg_size, &info->ep_attr->max_msg_size);
  }
  if (info->domain_attr != nullptr) {
    if (attrs.threading) info->domain_attr->threading = *attrs.threading;
    if (attrs.control_progress) {
      info->domain_attr->control_progress = *attrs.control_progress;
    }
    if (attrs.data_progress) {
      info->domain_attr->data_progress = *attrs.data_progress;
    }
  }
}

absl::StatusOr<InfoList> ProviderDefaults(uint32_t version,
                                          const fi_info* hints,
                                          const InstanceFilter& filter) {
  InfoList list;
  for (const Provider* provider : EnabledProviders()) {
    if (!ProviderSelected(*provider, hints, filter)) continue;
    InfoPtr info = provider->DefaultInfo();
    if (info == nullptr) return FiError(FI_ENOMEM, "out of memory");
    absl::StatusOr<AttrOverrides> attrs =
        ProviderAttrOverrides(provider->name());
    if (!attrs.ok()) return attrs.status();
    ApplyAttrOverrides(*attrs, info.get());
    info->fabric_attr->api_version = version;
    list.Append(std::move(info));
  }
  if (list.empty()) return FiError(FI_ENODATA, "no provider selected");
  return list;
}

// Matches one provider's candidates; the first reason one was rejected goes
// to *reason when none matches.
absl::StatusOr<InfoList> MatchProvider(const Provider& provider,
                                       const GetInfoRequest& request,
                                       const InstanceFilter& filter,
                                       std::string* reason) {
  InfoList matched;
  absl::StatusOr<InfoList> candidates = provider.Discover(request);
  if (!candidates.ok()) {
    if (candidates.status().code() != absl::StatusCode::kNotFound) {
      return candidates.status();
    }
    *reason = std::string(candidates.status().message());
    return matched;
  }
  absl::StatusOr<AttrOverrides> attrs = ProviderAttrOverrides(provider.name());
  if (!attrs.ok()) return attrs.status();
  for (fi_info* c = candidates->head(); c != nullptr; c = c->next) {
    ApplyAttrOverrides(*attrs, c);
    absl::Status instance = CheckInstance(filter, *c);
    absl::StatusOr<InfoPtr> info =
        instance.ok() ? MatchHints(*c, provider.SupportFor(*c), request.hints,
                                   request.version)
                      : absl::StatusOr<InfoPtr>(instance);
    if (!info.ok()) {
      if (info.status().code() != absl::StatusCode::kNotFound) {
        return info.status();
      }
      if (reason->empty()) *reason = std::string(info.status().message());
      continue;
    }
    ReferenceInstances(filter, provider, request, info->get());
    matched.Append(*std::move(info));
  }
  if (candidates->empty() && reason->empty()) {
    *reason = "no devices or interfaces available";
  }
  return matched;
}

}  // namespace

absl::Status CheckVersion(uint32_t version) {
  if (FI_MAJOR(version) != FI_MAJOR_VERSION ||
      FI_MINOR(version) > FI_MINOR_VERSION) {
    return FiError(FI_ENOSYS,
                   absl::StrCat("API version ", FI_MAJOR(version), ".",
                                FI_MINOR(version),
                                " is not supported (this library is ",
                                FI_MAJOR_VERSION, ".", FI_MINOR_VERSION, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<InfoList> GetInfo(uint32_t version, const char* node,
                                 const char* service, uint64_t flags,
                                 const fi_info* hints) {
  FABRIC_RETURN_IF_ERROR(ValidateArguments(version, node, service, flags));
  FABRIC_RETURN_IF_ERROR(EnsureConfigLoaded());
  FABRIC_RETURN_IF_ERROR(ValidateHints(hints, version));
  absl::StatusOr<InstanceFilter> filter = InstancesFromHints(hints);
  if (!filter.ok()) return filter.status();

  if ((flags & FI_PROV_ATTR_ONLY) != 0) {
    return ProviderDefaults(version, hints, *filter);
  }

  GetInfoRequest request;
  request.version = version;
  request.node = node;
  request.service = service;
  request.flags = flags;
  request.hints = hints;

  InfoList result;
  std::vector<std::pair<const Provider*, std::string>> reasons;
  for (const Provider* provider : EnabledProviders()) {
    if (!ProviderSelected(*provider, hints, *filter)) continue;
    std::string reason;
    absl::StatusOr<InfoList> matched =
        MatchProvider(*provider, request, *filter, &reason);
    if (!matched.ok()) return matched.status();
    if (matched->empty()) reasons.emplace_back(provider, reason);
    result.Append(*std::move(matched));
  }
  if (result.empty()) {
    if (reasons.empty()) {
      FI_WARN(CoreProvider(), FI_LOG_CORE,
              "no enabled provider is named by the hints' prov_name or "
              "instance\n");
    }
    for (const auto& [provider, reason] : reasons) {
      FI_WARN(CoreProvider(), FI_LOG_CORE, "%s: %s\n", provider->name(),
              reason.c_str());
    }
    return FiError(FI_ENODATA, "no provider matches the request");
  }
  for (const auto& [provider, reason] : reasons) {
    FI_INFO(CoreProvider(), FI_LOG_CORE, "%s: %s\n", provider->name(),
            reason.c_str());
  }
  return result;
}

}  // namespace fabric

extern "C" FABRIC_EXPORT int fi_getinfo(uint32_t version, const char* node,
                                        const char* service, uint64_t flags,
                                        const struct fi_info* hints,
                                        struct fi_info** info) {
  if (info == nullptr) {
    FI_WARN(fabric::CoreProvider(), FI_LOG_CORE, "info is NULL\n");
    return -FI_EINVAL;
  }
  *info = nullptr;
  absl::StatusOr<fabric::InfoList> result =
      fabric::GetInfo(version, node, service, flags, hints);
  if (!result.ok()) {
    if (result.status().code() != absl::StatusCode::kNotFound) {
      FI_WARN(fabric::CoreProvider(), FI_LOG_CORE, "%s\n",
              std::string(result.status().message()).c_str());
    }
    return fabric::ToFiErrno(result.status());
  }
  *info = result->Release();
  return 0;
}

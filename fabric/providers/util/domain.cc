#include "fabric/providers/util/domain.h"

#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/hints.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/util/peer_srx.h"
#include "fabric/providers/util/poll_set.h"

namespace fabric {
namespace {

UtilDomain* ToUtilDomain(fid* object) { return FidCast<UtilDomain>(object); }

int CloseDomain(fid* object) {
  UtilDomain* domain = ToUtilDomain(object);
  if (domain->open_children.load() > 0) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_DOMAIN,
            "domain %s still has %d open objects\n", domain->name.c_str(),
            domain->open_children.load());
    return -FI_EBUSY;
  }
  RemoveLiveObject(object);
  if (domain->peer_owner != nullptr) {
    domain->peer_owner->open_children.fetch_sub(1);
  }
  if (domain->eq != nullptr) domain->eq->open_children.fetch_sub(1);
  domain->fabric->open_children.fetch_sub(1);
  delete domain;
  return 0;
}

// fi_domain_bind: an EQ of the same fabric, once; FI_REG_MR is the only flag.
int BindDomain(fid* object, fid* bound, uint64_t flags) {
  UtilDomain* domain = ToUtilDomain(object);
  const fi_provider* log = domain->fabric->provider->c_provider();
  UtilEq* eq = AsUtilEq(bound);
  if (eq == nullptr || eq->fabric != domain->fabric) {
    FI_WARN(log, FI_LOG_DOMAIN,
            "fi_domain_bind: not an EQ of this domain's fabric\n");
    return -FI_EINVAL;
  }
  if ((flags & ~FI_REG_MR) != 0) {
    FI_WARN(log, FI_LOG_DOMAIN, "fi_domain_bind: unknown flags 0x%llx\n",
            static_cast<unsigned long long>(flags & ~FI_REG_MR));
    return -FI_EBADFLAGS;
  }
  if (domain->eq != nullptr) {
    FI_WARN(log, FI_LOG_DOMAIN, "fi_domain_bind: an EQ is already bound\n");
    return -FI_EINVAL;
  }
  eq->open_children.fetch_add(1);
  domain->eq = eq;
  domain->eq_flags = flags;
  return 0;
}

int OpenEndpoint2(fid_domain* domain, fi_info* info, fid_ep** ep,
                  uint64_t flags, void* context) {
  const Provider& provider = *ToUtilDomain(&domain->fid)->fabric->provider;
  if (info == nullptr || info->ep_attr == nullptr || ep == nullptr) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_endpoint: info, info->ep_attr and ep must not be NULL\n");
    return -FI_EINVAL;
  }
  // Our endpoints move their own data: none needs FI_PEER_TRANSFER (no
  // such mode bit), so none takes part in peer transfers (fi_peer(3)).
  if (flags & (FI_PEER_TRANSFER | FI_PEER)) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_endpoint2: %s endpoints do not take part in peer transfers\n",
            provider.name());
    return -FI_EINVAL;
  }
  if (flags != 0) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_endpoint2: unknown flags 0x%llx\n",
            static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  return provider.OpenEndpoint(domain, info, ep, flags, context);
}
int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                 void* context) {
  return OpenEndpoint2(domain, info, ep, 0, context);
}
int NoScalableEp(fid_domain*, fi_info*, fid_ep**, void*) {
  return -FI_ENOSYS;
}
// fi_stx_context: the provider's shared transmit contexts.
int OpenStxContext(fid_domain* domain, fi_tx_attr* attr, fid_stx** stx,
                   void* context) {
  const Provider& provider = *ToUtilDomain(&domain->fid)->fabric->provider;
  if (attr == nullptr || stx == nullptr) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_stx_context: attr and stx must not be NULL\n");
    return -FI_EINVAL;
  }
  int rc = provider.OpenSharedTxContext(domain, attr, stx, context);
  if (rc == -FI_ENOSYS) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_stx_context: %s has no shared transmit contexts\n",
            provider.name());
  }
  return rc;
}
int QueryAtomic(fid_domain* domain, fi_datatype datatype, fi_op op,
                fi_atomic_attr* attr, uint64_t flags) {
  return ToUtilDomain(&domain->fid)->fabric->provider->QueryAtomic(
      domain, datatype, op, attr, flags);
}
int OpenAv(fid_domain* domain, fi_av_attr* attr, fid_av** av,
           void* context) {
  const UtilDomain& util = *ToUtilDomain(&domain->fid);
  if (Provider::AvOpen open = util.fabric->provider->av_open(util)) {
    return open(domain, attr, av, context);
  }
  return OpenUtilAv(domain, attr, av, context);
}
int NoQueryCollective(fid_domain*, fi_collective_op, fi_collective_attr*,
                      uint64_t) {
  return -FI_ENOSYS;
}
// fi_set_ops: FI_SET_OPS_HMEM_OVERRIDE, before any resource is opened.
int SetOpsDomain(fid* object, const char* name, uint64_t flags, void* ops,
                 void*) {
  UtilDomain* domain = ToUtilDomain(object);
  const fi_provider* log = domain->fabric->provider->c_provider();
  if (name == nullptr || strcmp(name, FI_SET_OPS_HMEM_OVERRIDE) != 0) {
    FI_WARN(log, FI_LOG_DOMAIN, "fi_set_ops: unknown ops '%s'\n",
            name != nullptr ? name : "(null)");
    return -FI_ENOSYS;
  }
  if (flags != 0) {
    FI_WARN(log, FI_LOG_DOMAIN, "fi_set_ops: flags must be 0\n");
    return -FI_EBADFLAGS;
  }
  if (domain->open_children.load() > 0) {
    FI_WARN(log, FI_LOG_DOMAIN,
            "fi_set_ops: the HMEM override must be set before the domain's "
            "first resource is opened (%d are open)\n",
            domain->open_children.load());
    return -FI_EOPBADSTATE;
  }
  absl::Status status = domain->copier.SetOverride(
      static_cast<const fi_hmem_override_ops*>(ops));
  if (!status.ok()) {
    return LogFailure(log, FI_LOG_DOMAIN, status, "fi_set_ops");
  }
  return 0;
}

fi_ops kDomainFidOps = MakeFidOps(
    {.close = CloseDomain, .bind = BindDomain, .ops_set = SetOpsDomain});

fi_ops_domain kDomainOps = {
    .size = sizeof(fi_ops_domain),
    .av_open = OpenAv,
    .cq_open = OpenUtilCq,
    .endpoint = OpenEndpoint,
    .scalable_ep = NoScalableEp,
    .cntr_open = OpenUtilCntr,
    .poll_open = OpenUtilPollSet,
    .stx_ctx = OpenStxContext,
    .srx_ctx = OpenSrxContext,
    .query_atomic = QueryAtomic,
    .query_collective = NoQueryCollective,
    .endpoint2 = OpenEndpoint2,
};

bool Equal(const char* a, const std::string& b) {
  return a != nullptr && b == a;
}

// The attributes the provider gives `info` as hints on this fabric's domain
// info->domain_attr->name: what fi_getinfo would have returned for it.
absl::StatusOr<InfoPtr> EffectiveInfo(const UtilFabric& fabric,
                                      const fi_info& info) {
  const Provider& provider = *fabric.provider;
  FABRIC_RETURN_IF_ERROR(ValidateHints(&info, fabric.fabric_fid.api_version));
  GetInfoRequest request;
  request.version = fabric.fabric_fid.api_version;
  request.hints = &info;
  absl::StatusOr<InfoList> candidates = provider.Discover(request);
  if (!candidates.ok()) return candidates.status();
  absl::Status unmet = FiError(
      FI_ENODATA, absl::StrCat(provider.name(), " offers no domain '",
                               info.domain_attr->name, "' on fabric '",
                               fabric.name, "'"));
  for (const fi_info* c = candidates->head(); c != nullptr; c = c->next) {
    if (!Equal(c->domain_attr->name, info.domain_attr->name) ||
        !Equal(c->fabric_attr->name, fabric.name)) {
      continue;
    }
    absl::StatusOr<InfoPtr> matched =
        MatchHints(*c, provider.SupportFor(*c), &info, request.version);
    if (matched.ok()) return matched;
    unmet = matched.status();
  }
  return unmet;
}

// The owner's domain named by fi_domain2's FI_PEER `context`: one of our
// domains, else FI_EINVAL (the regions of a foreign domain cannot be
// looked up).
absl::StatusOr<UtilDomain*> PeerOwner(const void* context) {
  const auto* peer_context =
      static_cast<const fi_peer_domain_context*>(context);
  if (peer_context == nullptr ||
      peer_context->size < sizeof(fi_peer_domain_context) ||
      peer_context->domain == nullptr) {
    return FiError(FI_EINVAL, "fi_domain2: FI_PEER needs a struct "
                              "fi_peer_domain_context with the owner's domain");
  }
  UtilDomain* owner = AsUtilDomain(&peer_context->domain->fid);
  if (owner == nullptr) {
    return FiError(FI_EINVAL, "fi_domain2: FI_PEER: the owner's domain is "
                              "not one of this library's");
  }
  return owner;
}

absl::Status CheckArguments(const UtilFabric& fabric, const fi_info* info,
                            fid_domain** domain, uint64_t flags) {
  if (info == nullptr || domain == nullptr) {
    return FiError(FI_EINVAL, "fi_domain: info and domain must not be NULL");
  }
  if ((flags & ~FI_PEER) != 0) {
    return FiError(FI_EBADFLAGS, absl::StrCat("fi_domain2: unknown flags 0x",
                                              absl::Hex(flags)));
  }
  if (info->domain_attr == nullptr || info->domain_attr->name == nullptr) {
    return FiError(FI_EINVAL, "fi_domain: info->domain_attr->name is not set");
  }
  if (info->fabric_attr != nullptr && info->fabric_attr->name != nullptr &&
      !Equal(info->fabric_attr->name, fabric.name)) {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_domain: info is for fabric '",
                                info->fabric_attr->name, "', not '",
                                fabric.name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

int OpenUtilDomain(fid_fabric* fabric_fid, fi_info* info,
                   fid_domain** domain_out, uint64_t flags, void* context) {
  UtilFabric* fabric = ToUtilFabric(fabric_fid);
  const fi_provider* log = fabric->provider->c_provider();
  absl::Status status = CheckArguments(*fabric, info, domain_out, flags);
  absl::StatusOr<UtilDomain*> owner = nullptr;
  if (status.ok() && (flags & FI_PEER)) {
    owner = PeerOwner(context);
    status = owner.status();
  }
  absl::StatusOr<InfoPtr> effective =
      status.ok() ? EffectiveInfo(*fabric, *info) : status;
  if (!effective.ok()) {
    FI_WARN(log, FI_LOG_DOMAIN, "%s\n",
            std::string(effective.status().message()).c_str());
    return ToFiErrno(effective.status());
  }
  auto domain = std::make_unique<UtilDomain>();
  domain->domain_fid = {};
  InitFid(&domain->domain_fid.fid, FI_CLASS_DOMAIN, context, &kDomainFidOps);
  domain->domain_fid.ops = &kDomainOps;
  domain->domain_fid.mr = &kUtilMrOps;
  domain->fabric = fabric;
  domain->name = info->domain_attr->name;
  domain->info = *std::move(effective);
  domain->peer_owner = *owner;
  absl::StatusOr<std::unique_ptr<DomainResources>> resources =
      fabric->provider->OpenDomainResources(*domain);
  if (!resources.ok()) {
    FI_WARN(log, FI_LOG_DOMAIN, "%s\n",
            std::string(resources.status().message()).c_str());
    return ToFiErrno(resources.status());
  }
  domain->resources = *std::move(resources);
  if (domain->peer_owner != nullptr) {
    domain->peer_owner->open_children.fetch_add(1);
    domain->progress = domain->peer_owner->progress;
  }
  fabric->open_children.fetch_add(1);
  AddLiveObject(&domain->domain_fid.fid, fabric->provider->name(),
                domain->name, &fabric->fabric_fid.fid);
  *domain_out = &domain.release()->domain_fid;
  return 0;
}

bool AppSerializesDomain(const fi_domain_attr& attr) {
  return attr.threading == FI_THREAD_DOMAIN &&
         attr.data_progress == FI_PROGRESS_MANUAL &&
         attr.control_progress == FI_PROGRESS_MANUAL;
}

UtilDomain* AsUtilDomain(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_DOMAIN ||
      object->ops != &kDomainFidOps) {
    return nullptr;
  }
  return ToUtilDomain(object);
}

}  // namespace fabric

// File: fabric/providers/provider.h
//
// The interface between the core (fi_getinfo, fi_fabric) and a compiled-in
// provider. A provider says what it can offer on this machine (Discover), with
// local addressing already applied for the request; the core then applies the
// attribute hints uniformly (fabric/api/core/hints.h), orders, and returns.
//
// Providers are listed once, in fabric/api/entry/registry.cc.
#ifndef FABRIC_PROVIDERS_PROVIDER_H_
#define FABRIC_PROVIDERS_PROVIDER_H_

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_prov.h>

#include <stdint.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fabric/api/core/hints.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/domain_resources.h"

namespace fabric {

struct UtilDomain;

// The arguments of one fi_getinfo call, already validated by the core.
struct GetInfoRequest {
  uint32_t version = 0;
  const char* node = nullptr;
  const char* service = nullptr;
  uint64_t flags = 0;
  const fi_info* hints = nullptr;  // may be null
};

class Provider {
 public:
  Provider(const char* name, uint32_t version);
  virtual ~Provider() = default;
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  const char* name() const { return c_provider_.name; }
  uint32_t version() const { return c_provider_.version; }
  // What fi_log and fi_param_* take to name this provider.
  const fi_provider* c_provider() const { return &c_provider_; }

  // Order among providers when no configuration says otherwise: higher first.
  virtual int default_priority() const = 0;

  // One fi_info with the provider's default attributes, whether or not it can
  // run here (FI_PROV_ATTR_ONLY).
  virtual InfoPtr DefaultInfo() const = 0;

  // Everything the provider can serve on this machine for `request`, best
  // first, with src/dest addresses and addr_format filled in. Attribute hints
  // other than addressing are left to the core. An empty list (with a debug
  // log saying why) when the provider has nothing here.
  virtual absl::StatusOr<InfoList> Discover(
      const GetInfoRequest& request) const = 0;

  // Which settings `candidate` (one of Discover's results) can take besides
  // its defaults.
  virtual AttrSupport SupportFor(const fi_info& candidate) const = 0;

  // fi_fabric for a fabric this provider reported; attr has been checked to
  // name this provider.
  virtual int OpenFabric(const fi_fabric_attr& attr, fid_fabric** fabric,
                         void* context) const = 0;

  // What the provider keeps for a domain being opened (`domain` is filled
  // in: its name, fabric and attributes): null when it keeps nothing (the
  // default), or the failure fi_domain returns.
  virtual absl::StatusOr<std::unique_ptr<DomainResources>>
  OpenDomainResources(const UtilDomain& domain) const;

  // fi_endpoint / fi_endpoint2 on one of this provider's domains (info,
  // info->ep_attr and ep are not NULL, flags 0; the rest is unchecked),
  // and fi_passive_ep on one of its fabrics (an info of another endpoint
  // type than FI_EP_MSG refused already; the rest unchecked).
  // -FI_ENOSYS unless the provider has such endpoints.
  virtual int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                           uint64_t flags, void* context) const;
  virtual int OpenPassiveEndpoint(fid_fabric* fabric, fi_info* info,
                                  fid_pep** pep, void* context) const;

  // fi_av_open on one of this provider's domains: the provider's own AV for
  // addresses the utility AV (util/av.h: IP addresses) does not take, or
  // null (the default) for the utility AV.
  using AvOpen = int (*)(fid_domain* domain, fi_av_attr* attr, fid_av** av,
                         void* context);
  virtual AvOpen av_open(const UtilDomain& domain) const {
    (void)domain;
    return nullptr;
  }

  // fi_query_atomic on one of this provider's domains. Arguments are not
  // yet checked. -FI_ENOSYS unless the provider has atomics.
  virtual int QueryAtomic(fid_domain* domain, fi_datatype datatype, fi_op op,
                          fi_atomic_attr* attr, uint64_t flags) const;

  // The callbacks this provider's endpoints give a peer SRX's owner
  // (fi_srx_context with FI_PEER, util/peer_srx.h); null when its
  // endpoints cannot take receive buffers from an owner.
  virtual fi_ops_srx_peer* peer_srx_ops() const { return nullptr; }

  // fi_srx_context without FI_PEER and fi_stx_context on one of this
  // provider's domains (attr and the out pointer are not NULL): shared
  // receive and transmit contexts for applications. -FI_ENOSYS unless the
  // provider has them (and then fi_getinfo offers no FI_SHARED_CONTEXT).
  virtual int OpenSharedRxContext(fid_domain* domain, fi_rx_attr* attr,
                                  fid_ep** srx, void* context) const;
  virtual int OpenSharedTxContext(fid_domain* domain, fi_tx_attr* attr,
                                  fid_stx** stx, void* context) const;

 protected:
  // A copy of `info` naming this provider (prov_name, prov_version), for
  // DefaultInfo; nullptr when out of memory.
  InfoPtr NamedCopy(const fi_info& info) const;

 private:
  fi_provider c_provider_;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_PROVIDER_H_

// File: fabric/providers/verbs/verbs_domain.h
//
// What a verbs domain keeps (DomainResources): the device's context as
// librdmacm opened it (rdma_get_devices; connection ids resolved to the
// device carry that same context, so queue pairs and regions meet), a
// protection domain on it, and the device's attributes. Memory regions are
// registered with ibv_reg_mr through the domain's registration cache
// (util/registration_cache.h: a region over memory a live registration
// covers takes that one; FI_MR_CACHE_* settings) when peers cannot access
// it (no FI_REMOTE_READ/WRITE: closing a remote one must revoke its key,
// so those are registered and deregistered each time): fi_mr_key is the
// registration's rkey, fi_mr_desc a RegionDesc with its lkey. A domain
// opened without FI_MR_LOCAL registers the buffers its endpoints are handed
// without descriptors through the same cache (AcquireLocal), each held by
// its work request until it completes (LocalRegistrations).
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_DOMAIN_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_DOMAIN_H_

#include <infiniband/verbs.h>

#include <sys/uio.h>

#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "fabric/providers/domain_resources.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/registration_cache.h"
#include "fabric/providers/verbs/verbs_api.h"
#include "fabric/providers/verbs/verbs_requests.h"

namespace fabric {
namespace verbs {

// A registered region: fi_mr_desc points at `desc`.
struct Region {
  RegionDesc desc;  // first
  RegistrationCache::Entry* registration = nullptr;  // handle: its ibv_mr
};

class VerbsDomain : public DomainResources {
 public:
  // Opens the protection domain on device `device` (the domain's name).
  // FI_ENODEV when librdmacm has no device of that name.
  static absl::StatusOr<std::unique_ptr<VerbsDomain>> Open(
      const VerbsApi* api, const std::string& device);
  ~VerbsDomain() override;

  absl::StatusOr<uint64_t> RegisterRegion(UtilMr* mr) override;
  void DeregisterRegion(UtilMr* mr) override;

  // A registration of [addr, addr + len) for a work request's local
  // buffer: one the device only reads (sends, writes), or one it writes too
  // (receives, the data of reads, atomics' old values). Release it when the
  // request completes.
  absl::StatusOr<RegistrationCache::Entry*> AcquireLocal(const void* addr,
                                                         size_t len,
                                                         bool device_writes);
  void ReleaseLocal(RegistrationCache::Entry* entry);

  const VerbsApi& api() const { return *api_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const ibv_device_attr& device_attr() const { return device_attr_; }
  bool atomics() const { return device_attr_.atomic_cap != IBV_ATOMIC_NONE; }
  // The inline data its RC queue pairs take (VerbsApi::MaxInlineData).
  uint32_t max_inline() const { return max_inline_; }

 private:
  VerbsDomain(const VerbsApi* api, ibv_context** contexts,
              ibv_context* context)
      : api_(api), contexts_(contexts), context_(context) {}

  const VerbsApi* api_;
  ibv_context** contexts_;  // rdma_get_devices's list, kept while in use
  ibv_context* context_;
  ibv_pd* pd_ = nullptr;
  ibv_device_attr device_attr_ = {};
  uint32_t max_inline_ = 0;
  // Made once the protection domain exists; gone before it.
  std::unique_ptr<RegistrationCache> registrations_;
};

// The registrations one work request holds (AcquireLocal), released when
// it is cleared or destroyed.
class LocalRegistrations {
 public:
  LocalRegistrations() = default;
  ~LocalRegistrations() {
    if (!entries_.empty()) Clear();
  }
  LocalRegistrations(LocalRegistrations&& other) noexcept;
  LocalRegistrations& operator=(LocalRegistrations&& other) noexcept;

  // Registers `piece` through `domain` and describes it in `desc` (its
  // lkey); a piece of no bytes needs none.
  absl::Status Add(VerbsDomain* domain, const iovec& piece,
                   bool device_writes, RegionDesc* desc);
  bool empty() const { return entries_.empty(); }
  void Clear();

 private:
  VerbsDomain* domain_ = nullptr;
  absl::InlinedVector<RegistrationCache::Entry*, 4> entries_;
};

// The VerbsDomain of one of the verbs provider's domains.
inline VerbsDomain* ToVerbsDomain(UtilDomain* domain) {
  return static_cast<VerbsDomain*>(domain->resources.get());
}

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_DOMAIN_H_

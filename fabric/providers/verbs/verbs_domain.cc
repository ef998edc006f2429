#include "fabric/providers/verbs/verbs_domain.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/api/config/mr_cache_settings.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/verbs/verbs_attr.h"

namespace fabric {
namespace verbs {

absl::StatusOr<std::unique_ptr<VerbsDomain>> VerbsDomain::Open(
    const VerbsApi* api, const std::string& device) {
  int count = 0;
  ibv_context** contexts = api->get_devices(&count);
  if (contexts == nullptr) {
    return FiError(FI_ENODEV, absl::StrCat("rdma_get_devices: ",
                                           strerror(errno)));
  }
  ibv_context* context = nullptr;
  for (int i = 0; i < count && context == nullptr; ++i) {
    if (device == api->get_device_name(contexts[i]->device)) {
      context = contexts[i];
    }
  }
  if (context == nullptr) {
    api->free_devices(contexts);
    return FiError(FI_ENODEV, absl::StrCat("fi_domain: librdmacm has no "
                                           "device named '", device, "'"));
  }
  std::unique_ptr<VerbsDomain> domain(new VerbsDomain(api, contexts, context));
  if (int rc = api->query_device(context, &domain->device_attr_); rc != 0) {
    return FiError(FI_EIO, absl::StrCat(device, ": ibv_query_device: ",
                                        strerror(rc)));
  }
  domain->max_inline_ = api->MaxInlineData(context, kMaxInjectSize);
  domain->pd_ = api->alloc_pd(context);
  if (domain->pd_ == nullptr) {
    return FiError(FI_ENOMEM, absl::StrCat(device, ": ibv_alloc_pd: ",
                                           strerror(errno)));
  }
  MrCacheSettings settings = CurrentMrCacheSettings();
  VerbsDomain* raw = domain.get();
  domain->registrations_ = std::make_unique<RegistrationCache>(
      settings.max_count, settings.max_size,
      [raw](uintptr_t addr, size_t len,
            uint64_t access) -> absl::StatusOr<void*> {
        ibv_mr* mr = raw->api_->reg_mr(raw->pd_, reinterpret_cast<void*>(addr),
                                       len, AccessOf(access, raw->atomics()));
        if (mr == nullptr) {
          int err = errno;
          return FiError(err == ENOMEM ? FI_ENOMEM : FI_EINVAL,
                         absl::StrCat("ibv_reg_mr of ", len, " bytes: ",
                                      strerror(err)));
        }
        return mr;
      },
      [raw](void* handle) {
        raw->api_->dereg_mr(static_cast<ibv_mr*>(handle));
      });
  return domain;
}

VerbsDomain::~VerbsDomain() {
  registrations_.reset();  // every registration goes before the PD
  if (pd_ != nullptr) api_->dealloc_pd(pd_);
  api_->free_devices(contexts_);
}

absl::StatusOr<uint64_t> VerbsDomain::RegisterRegion(UtilMr* mr) {
  // The domain's mr_iov_limit is 1: a region is one piece (or none).
  void* base = mr->iov.empty() ? nullptr : mr->iov[0].iov_base;
  size_t len = mr->iov.empty() ? 0 : mr->iov[0].iov_len;
  if (mr->iface != FI_HMEM_SYSTEM) {
    return FiError(FI_EOPNOTSUPP, "fi_mr_reg: verbs registers host memory "
                                  "only in this version");
  }
  // A region peers may access is never cached: closing it must revoke its
  // key. Local ones (send and receive buffers, bounce buffers) are.
  bool remote = (mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) != 0;
  absl::StatusOr<RegistrationCache::Entry*> registration =
      registrations_->Acquire(base, len, mr->access, !remote);
  if (!registration.ok()) return registration.status();
  auto region = std::make_unique<Region>();
  region->registration = *registration;
  const ibv_mr* device_mr = static_cast<ibv_mr*>((*registration)->handle);
  region->desc.lkey = device_mr->lkey;
  mr->mr_fid.mem_desc = &region->desc;
  const uint64_t key = device_mr->rkey;
  mr->device_region = region.release();
  return key;
}

void VerbsDomain::DeregisterRegion(UtilMr* mr) {
  auto* region = static_cast<Region*>(mr->device_region);
  registrations_->Release(region->registration);
  delete region;
  mr->device_region = nullptr;
}

absl::StatusOr<RegistrationCache::Entry*> VerbsDomain::AcquireLocal(
    const void* addr, size_t len, bool device_writes) {
  // The access of a buffer the device writes covers one it only reads, so
  // a cached registration of a receive buffer serves a send from it too.
  // Read-only memory (a constant string sent) cannot be registered for
  // writing: sends ask for less.
  uint64_t access = FI_SEND | FI_WRITE;
  if (device_writes) access |= FI_RECV | FI_READ;
  return registrations_->Acquire(addr, len, access);
}

void VerbsDomain::ReleaseLocal(RegistrationCache::Entry* entry) {
  registrations_->Release(entry);
}

LocalRegistrations::LocalRegistrations(LocalRegistrations&& other) noexcept
    : domain_(other.domain_), entries_(std::move(other.entries_)) {
  other.entries_.clear();
}

LocalRegistrations& LocalRegistrations::operator=(
    LocalRegistrations&& other) noexcept {
  if (this != &other) {
    Clear();
    domain_ = other.domain_;
    entries_ = std::move(other.entries_);
    other.entries_.clear();
  }
  return *this;
}

absl::Status LocalRegistrations::Add(VerbsDomain* domain, const iovec& piece,
                                     bool device_writes, RegionDesc* desc) {
  desc->lkey = 0;
  if (piece.iov_len == 0) return absl::OkStatus();
  domain_ = domain;
  absl::StatusOr<RegistrationCache::Entry*> entry =
      domain->AcquireLocal(piece.iov_base, piece.iov_len, device_writes);
  if (!entry.ok()) return entry.status();
  entries_.push_back(*entry);
  desc->lkey = static_cast<const ibv_mr*>((*entry)->handle)->lkey;
  return absl::OkStatus();
}

void LocalRegistrations::Clear() {
  for (RegistrationCache::Entry* entry : entries_) {
    domain_->ReleaseLocal(entry);
  }
  entries_.clear();
}

}  // namespace verbs
}  // namespace fabric

#include "fabric/providers/util/mr.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <sys/random.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/hmem/memory_interface.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/log_failure.h"

namespace fabric {
namespace {

constexpr uint64_t kMrAccess = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
                               FI_REMOTE_READ | FI_REMOTE_WRITE;
constexpr uint64_t kMrRegFlags =
    FI_RMA_EVENT | FI_HMEM_DEVICE_ONLY | FI_HMEM_HOST_ALLOC;

// The arguments of fi_mr_reg/regv/regattr, gathered.
struct Registration {
  std::vector<iovec> iov;
  uint64_t access = 0;
  uint64_t offset = 0;
  uint64_t requested_key = 0;
  int iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
  uint64_t flags = 0;
  void* context = nullptr;
  std::string auth_key;  // empty: the domain's
};

const fi_provider* Log(const UtilDomain& domain) {
  return domain.fabric->provider->c_provider();
}

int Fail(const UtilDomain& domain, const absl::Status& status) {
  return LogFailure(Log(domain), FI_LOG_MR, status);
}

int MrMode(const UtilDomain& domain) {
  return domain.info->domain_attr->mr_mode;
}

// API <= 1.4: FI_MR_BASIC means provider keys and virtual addresses.
bool ProviderKeys(const UtilDomain& domain) {
  return MrMode(domain) == FI_MR_BASIC ||
         (MrMode(domain) != FI_MR_SCALABLE &&
          (MrMode(domain) & FI_MR_PROV_KEY) != 0);
}

bool VirtualAddresses(const UtilDomain& domain) {
  return MrMode(domain) == FI_MR_BASIC ||
         (MrMode(domain) != FI_MR_SCALABLE &&
          (MrMode(domain) & FI_MR_VIRT_ADDR) != 0);
}

size_t TotalLength(const std::vector<iovec>& iov) {
  size_t total = 0;
  for (const iovec& piece : iov) total += piece.iov_len;
  return total;
}

// What a region registered without its own authorization key uses.
std::string DomainAuthKey(const UtilDomain& domain) {
  const fi_domain_attr& attr = *domain.info->domain_attr;
  if (attr.auth_key == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(attr.auth_key),
                     attr.auth_key_size);
}

// The first remote address of the region.
uint64_t RegionStart(const UtilMr& mr) {
  if (!VirtualAddresses(*mr.domain)) return mr.offset;
  return mr.iov.empty() ? 0 : reinterpret_cast<uintptr_t>(mr.iov[0].iov_base);
}

// Every open region of the process, by its descriptor (LiveRegion), and
// how many have closed (LiveRegionCache).
std::mutex live_regions_mutex;
std::unordered_map<const void*, const UtilMr*>& LiveRegions() {
  static auto* regions = new std::unordered_map<const void*, const UtilMr*>;
  return *regions;
}

int CloseMr(fid* object) {
  UtilMr* mr = FidCast<UtilMr>(object);
  {
    std::lock_guard<std::mutex> lock(live_regions_mutex);
    LiveRegions().erase(mr->mr_fid.mem_desc);
    LiveRegionCache::regions_closed.fetch_add(1, std::memory_order_release);
  }
  {
    std::lock_guard<std::mutex> lock(mr->domain->mr_mutex);
    mr->domain->mrs.erase(mr->mr_fid.key);
  }
  if (mr->device_region != nullptr) {
    mr->domain->resources->DeregisterRegion(mr);
  }
  if (mr->cntr != nullptr) mr->cntr->open_children.fetch_sub(1);
  mr->domain->open_children.fetch_sub(1);
  delete mr;
  return 0;
}

// FI_MR_ENDPOINT: the region serves the endpoint `bound` (of its domain)
// once fi_mr_enable is called; once, before enabling.
int BindMrToEndpoint(UtilMr* mr, fid* bound, uint64_t flags) {
  // Every endpoint of this library starts with its UtilEndpoint.
  auto* ep = FidCast<UtilEndpoint>(bound);
  std::lock_guard<std::mutex> lock(mr->domain->mr_mutex);
  if ((MrMode(*mr->domain) & FI_MR_ENDPOINT) == 0 || flags != 0 ||
      ep->domain != mr->domain || mr->ep != nullptr || mr->enabled) {
    return Fail(*mr->domain,
                FiError(FI_EINVAL, "fi_mr_bind: an endpoint of the region's "
                                   "domain, once, flags 0, before "
                                   "fi_mr_enable, with FI_MR_ENDPOINT"));
  }
  mr->ep = ep;
  return 0;
}

// fi_mr_bind: a counter (FI_REMOTE_WRITE: counts remote writes into the
// region), or an endpoint (FI_MR_ENDPOINT).
int BindMr(fid* object, fid* bound, uint64_t flags) {
  UtilMr* mr = FidCast<UtilMr>(object);
  if (bound != nullptr && bound->fclass == FI_CLASS_EP) {
    return BindMrToEndpoint(mr, bound, flags);
  }
  UtilCntr* cntr = AsUtilCntr(bound);
  if (cntr == nullptr || cntr->domain != mr->domain) {
    return Fail(*mr->domain, FiError(FI_EINVAL, "fi_mr_bind: not a counter "
                                                "of this domain"));
  }
  if (flags != FI_REMOTE_WRITE || mr->cntr != nullptr) {
    return Fail(*mr->domain,
                FiError(FI_EINVAL, "fi_mr_bind: a counter is bound once, "
                                   "with FI_REMOTE_WRITE"));
  }
  cntr->open_children.fetch_add(1);
  mr->cntr = cntr;
  mr->cntr_flags = flags;
  return 0;
}

// FI_REFRESH: the pages must lie inside the region.
int Refresh(const UtilMr& mr, const fi_mr_modify* modify) {
  if (modify == nullptr ||
      (modify->attr.iov_count > 0 && modify->attr.mr_iov == nullptr)) {
    return Fail(*mr.domain, FiError(FI_EINVAL, "fi_mr_refresh: no iov"));
  }
  for (size_t i = 0; i < modify->attr.iov_count; ++i) {
    const iovec& page = modify->attr.mr_iov[i];
    auto start = reinterpret_cast<uintptr_t>(page.iov_base);
    bool inside = false;
    for (const iovec& piece : mr.iov) {
      auto base = reinterpret_cast<uintptr_t>(piece.iov_base);
      inside |= start >= base && page.iov_len <= piece.iov_len &&
                start - base <= piece.iov_len - page.iov_len;
    }
    if (!inside) {
      return Fail(*mr.domain, FiError(FI_EINVAL, "fi_mr_refresh: range "
                                                 "outside the region"));
    }
  }
  return 0;
}

int ControlMr(fid* object, int command, void* arg) {
  UtilMr* mr = FidCast<UtilMr>(object);
  switch (command) {
    case FI_ENABLE: {
      std::lock_guard<std::mutex> lock(mr->domain->mr_mutex);
      if ((MrMode(*mr->domain) & FI_MR_ENDPOINT) != 0 && mr->ep == nullptr) {
        return Fail(*mr->domain,
                    FiError(FI_EOPBADSTATE, "fi_mr_enable: bind the region "
                                            "to an endpoint first "
                                            "(FI_MR_ENDPOINT)"));
      }
      mr->enabled = true;
      return 0;
    }
    case FI_REFRESH:
      return Refresh(*mr, static_cast<const fi_mr_modify*>(arg));
    default:
      return -FI_ENOSYS;  // raw keys are not used: keys fit in 64 bits
  }
}

fi_ops kMrFidOps =
    MakeFidOps({.close = CloseMr, .bind = BindMr, .control = ControlMr});

absl::Status CheckRegistration(const UtilDomain& domain,
                               const Registration& reg) {
  if ((reg.access & ~kMrAccess) != 0) {
    return FiError(FI_EINVAL, absl::StrCat("fi_mr_reg: unknown access bits 0x",
                                           absl::Hex(reg.access & ~kMrAccess)));
  }
  if ((reg.flags & ~kMrRegFlags) != 0) {
    return FiError(FI_EBADFLAGS, absl::StrCat("fi_mr_reg: unknown flags 0x",
                                              absl::Hex(reg.flags)));
  }
  if (reg.iov.size() > domain.info->domain_attr->mr_iov_limit) {
    return FiError(FI_EINVAL, absl::StrCat("fi_mr_regv: ", reg.iov.size(),
                                           " iovs exceed mr_iov_limit ",
                                           domain.info->domain_attr
                                               ->mr_iov_limit));
  }
  for (const iovec& piece : reg.iov) {
    if (piece.iov_base == nullptr && piece.iov_len > 0) {
      return FiError(FI_EINVAL, "fi_mr_reg: NULL buffer");
    }
  }
  size_t max_key =
      domain.fabric->provider->SupportFor(*domain.info).max_auth_key_size;
  if (reg.auth_key.size() > max_key) {
    return FiError(FI_EINVAL, absl::StrCat("fi_mr_regattr: auth_key_size ",
                                           reg.auth_key.size(),
                                           " exceeds the provider's ",
                                           max_key));
  }
  if (reg.iface < FI_HMEM_SYSTEM || reg.iface > FI_HMEM_SYNAPSEAI) {
    return FiError(FI_EINVAL, absl::StrCat("fi_mr_regattr: unknown iface ",
                                           reg.iface));
  }
  if (reg.iface != FI_HMEM_SYSTEM) {
    if ((MrMode(domain) & FI_MR_HMEM) == 0) {
      return FiError(FI_EINVAL, "fi_mr_regattr: device memory needs the "
                                "FI_MR_HMEM mr_mode");
    }
    if (!HmemIfaceAvailable(static_cast<fi_hmem_iface>(reg.iface))) {
      return FiError(FI_ENOSYS, absl::StrCat("fi_mr_regattr: memory "
                                             "interface ", reg.iface,
                                             " is not available here"));
    }
  }
  return absl::OkStatus();
}

// The region's key: the device's for a region registered with one
// (`device_key`), else the application's or a random one.
absl::StatusOr<uint64_t> ChooseKey(UtilDomain& domain, uint64_t requested,
                                   std::optional<uint64_t> device_key) {
  if (domain.mrs.size() >= domain.info->domain_attr->mr_cnt) {
    return FiError(FI_ENOSPC, absl::StrCat("fi_mr_reg: the domain's mr_cnt (",
                                           domain.info->domain_attr->mr_cnt,
                                           ") regions are registered"));
  }
  if (device_key.has_value()) {
    if (domain.mrs.count(*device_key) != 0) {
      return FiError(FI_ENOKEY, absl::StrCat("fi_mr_reg: the device gave key ",
                                             *device_key, ", which is in "
                                             "use"));
    }
    return *device_key;
  }
  if (!ProviderKeys(domain)) {
    if (domain.mrs.count(requested) != 0) {
      return FiError(FI_ENOKEY, absl::StrCat("fi_mr_reg: key ", requested,
                                             " is in use"));
    }
    return requested;
  }
  for (;;) {
    uint64_t key;
    if (getrandom(&key, sizeof(key), 0) != sizeof(key)) {
      return FiError(FI_EOTHER, "getrandom failed");
    }
    if (key != FI_KEY_NOTAVAIL && domain.mrs.count(key) == 0) return key;
  }
}

int Register(fid* owner, Registration reg, fid_mr** mr_out) {
  if (owner == nullptr || owner->fclass != FI_CLASS_DOMAIN) {
    return -FI_EINVAL;  // per-endpoint registration needs endpoints
  }
  UtilDomain& domain = *FidCast<UtilDomain>(owner);
  if (mr_out == nullptr) {
    return Fail(domain, FiError(FI_EINVAL, "fi_mr_reg: mr is NULL"));
  }
  if (absl::Status status = CheckRegistration(domain, reg); !status.ok()) {
    return Fail(domain, status);
  }
  auto* mr = new UtilMr;
  mr->mr_fid = {};
  InitFid(&mr->mr_fid.fid, FI_CLASS_MR, reg.context, &kMrFidOps);
  mr->mr_fid.mem_desc = mr;
  mr->domain = &domain;
  mr->iov = std::move(reg.iov);
  mr->access = reg.access;
  mr->enabled = (MrMode(domain) & FI_MR_ENDPOINT) == 0;
  mr->offset = reg.offset;
  mr->iface = static_cast<fi_hmem_iface>(reg.iface);
  mr->device = reg.device;
  mr->auth_key = !reg.auth_key.empty() ? std::move(reg.auth_key)
                                       : DomainAuthKey(domain);
  std::optional<uint64_t> device_key;
  if (domain.resources != nullptr) {
    absl::StatusOr<uint64_t> key = domain.resources->RegisterRegion(mr);
    if (!key.ok()) {
      delete mr;
      return Fail(domain, key.status());
    }
    // Only a region peers may access has a device key that names it:
    // soft-RoCE gives every other region the remote key 0. Those get a key
    // of their own, unused by any peer.
    if ((reg.access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) != 0) {
      device_key = *key;
    }
  }
  {
    std::lock_guard<std::mutex> lock(domain.mr_mutex);
    absl::StatusOr<uint64_t> key =
        ChooseKey(domain, reg.requested_key, device_key);
    if (!key.ok()) {
      if (mr->device_region != nullptr) domain.resources->DeregisterRegion(mr);
      delete mr;
      return Fail(domain, key.status());
    }
    mr->mr_fid.key = *key;
    domain.mrs[*key] = mr;
  }
  {
    std::lock_guard<std::mutex> lock(live_regions_mutex);
    LiveRegions()[mr->mr_fid.mem_desc] = mr;
  }
  domain.open_children.fetch_add(1);
  if (domain.eq != nullptr && (domain.eq_flags & FI_REG_MR) != 0) {
    // Asynchronous registration: the completion is an FI_MR_COMPLETE event.
    fi_eq_entry event = {};
    event.fid = &mr->mr_fid.fid;
    event.context = reg.context;
    ssize_t rc = EqPost(&domain.eq->eq_fid, FI_MR_COMPLETE, &event,
                        sizeof(event));
    if (rc < 0) {
      CloseMr(&mr->mr_fid.fid);
      return static_cast<int>(rc);
    }
  }
  *mr_out = &mr->mr_fid;
  return 0;
}

int RegMr(fid* owner, const void* buf, size_t len, uint64_t access,
          uint64_t offset, uint64_t requested_key, uint64_t flags,
          fid_mr** mr, void* context) {
  Registration reg;
  reg.iov.push_back(iovec{const_cast<void*>(buf), len});
  reg.access = access;
  reg.offset = offset;
  reg.requested_key = requested_key;
  reg.flags = flags;
  reg.context = context;
  return Register(owner, std::move(reg), mr);
}

int RegvMr(fid* owner, const iovec* iov, size_t count, uint64_t access,
           uint64_t offset, uint64_t requested_key, uint64_t flags,
           fid_mr** mr, void* context) {
  if (iov == nullptr && count > 0) return -FI_EINVAL;
  Registration reg;
  reg.iov.assign(iov, iov + count);
  reg.access = access;
  reg.offset = offset;
  reg.requested_key = requested_key;
  reg.flags = flags;
  reg.context = context;
  return Register(owner, std::move(reg), mr);
}

// fi_mr_attr grew: auth_key_size and auth_key in API 1.5, iface and device
// in 1.10. Fields past the application's version are not read.
int RegattrMr(fid* owner, const fi_mr_attr* attr, uint64_t flags,
              fid_mr** mr) {
  if (owner == nullptr || owner->fclass != FI_CLASS_DOMAIN) return -FI_EINVAL;
  const UtilDomain& domain = *FidCast<UtilDomain>(owner);
  if (attr == nullptr || (attr->mr_iov == nullptr && attr->iov_count > 0)) {
    return Fail(domain, FiError(FI_EINVAL, "fi_mr_regattr: attr or its "
                                           "mr_iov is NULL"));
  }
  Registration reg;
  reg.iov.assign(attr->mr_iov, attr->mr_iov + attr->iov_count);
  reg.access = attr->access;
  reg.offset = attr->offset;
  reg.requested_key = attr->requested_key;
  reg.flags = flags;
  reg.context = attr->context;
  uint32_t version = domain.fabric->fabric_fid.api_version;
  if (version >= FI_VERSION(1, 5) && attr->auth_key_size > 0) {
    if (attr->auth_key == nullptr) {
      return Fail(domain, FiError(FI_EINVAL, "fi_mr_regattr: auth_key_size "
                                             "without auth_key"));
    }
    reg.auth_key.assign(reinterpret_cast<const char*>(attr->auth_key),
                        attr->auth_key_size);
  }
  if (version >= FI_VERSION(1, 10)) {
    reg.iface = EnumValue(attr->iface);
    reg.device = attr->device.reserved;
  }
  return Register(owner, std::move(reg), mr);
}

}  // namespace

fi_ops_mr kUtilMrOps = {
    .size = sizeof(fi_ops_mr),
    .reg = RegMr,
    .regv = RegvMr,
    .regattr = RegattrMr,
};

absl::StatusOr<RemoteRegion> MrResolveRemote(UtilDomain* domain,
                                             const RemoteAccess& request) {
  std::unique_lock<std::mutex> lock(domain->mr_mutex);
  auto it = domain->mrs.find(request.key);
  if (it == domain->mrs.end() && domain->peer_owner != nullptr) {
    lock.unlock();
    RemoteAccess for_owner = request;
    for_owner.bound_elsewhere_ok = true;
    return MrResolveRemote(domain->peer_owner, for_owner);
  }
  if (it == domain->mrs.end()) {
    return FiError(FI_EACCES, absl::StrCat("no memory region with key 0x",
                                           absl::Hex(request.key)));
  }
  const UtilMr& mr = *it->second;
  const UtilEndpoint* target = request.target;
  if (!mr.enabled || (target != nullptr && mr.ep != nullptr &&
                      mr.ep != target && !request.bound_elsewhere_ok)) {
    return FiError(FI_EACCES, "the region is not enabled for this endpoint "
                              "(FI_MR_ENDPOINT)");
  }
  if (target != nullptr && mr.auth_key != target->auth_key) {
    return FiError(FI_EACCES, "the region has another authorization key "
                              "than the endpoint's peers");
  }
  if ((mr.access & request.access) != request.access) {
    return FiError(FI_EACCES, "the region does not allow this access");
  }
  uint64_t start = RegionStart(mr);
  size_t total = TotalLength(mr.iov);
  size_t len = request.len;
  if (request.addr < start || request.addr - start > total ||
      len > total - (request.addr - start)) {
    return FiError(FI_EACCES, "the access falls outside the region");
  }
  RemoteRegion region;
  size_t skip = request.addr - start;
  for (const iovec& piece : mr.iov) {
    if (len == 0) break;
    if (skip >= piece.iov_len) {
      skip -= piece.iov_len;
      continue;
    }
    size_t n = std::min(piece.iov_len - skip, len);
    region.pieces.push_back(
        iovec{static_cast<char*>(piece.iov_base) + skip, n});
    len -= n;
    skip = 0;
  }
  region.iface = mr.iface;
  region.device = mr.device;
  region.cntr = mr.cntr;
  return region;
}

const UtilMr* LiveRegion(const void* desc) {
  std::lock_guard<std::mutex> lock(live_regions_mutex);
  auto it = LiveRegions().find(desc);
  return it != LiveRegions().end() ? it->second : nullptr;
}

std::atomic<uint64_t> LiveRegionCache::regions_closed{0};

bool LiveRegionCache::LookUp(const void* desc) {
  // Read before the lookup: a close after it makes the next check look
  // again.
  const uint64_t closes = regions_closed.load(std::memory_order_acquire);
  if (LiveRegion(desc) == nullptr) return false;
  known_ = desc;
  closes_ = closes;
  return true;
}

}  // namespace fabric

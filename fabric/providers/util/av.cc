#include "fabric/providers/util/av.h"

#include <arpa/inet.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/av_set.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/peer_av.h"

namespace fabric {
namespace {

constexpr uint64_t kAvOpenFlags =
    FI_EVENT | FI_SYMMETRIC | FI_AV_USER_ID | FI_READ;
constexpr uint64_t kInsertFlags = FI_MORE | FI_SYNC_ERR | FI_AV_USER_ID;

UtilAv* ToUtilAv(fid_av* av) { return FidCast<UtilAv>(av); }

const fi_provider* Log(const UtilAv& av) {
  return av.domain->fabric->provider->c_provider();
}

// Family, port, address and scope: what makes two addresses the same peer,
// whatever padding the application left in its sockaddr.
std::string AddressKey(const IpAddress& address) {
  const sockaddr* sa = address.sockaddr_ptr();
  if (address.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return absl::StrCat("4/", in->sin_addr.s_addr, "/", address.port());
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
  return absl::StrCat(
      "6/", std::string(reinterpret_cast<const char*>(&in6->sin6_addr), 16),
      "/", address.port(), "/", in6->sin6_scope_id);
}

// AvInsertsSoFar's count.
std::atomic<uint64_t> inserts_so_far{0};

// Adds one address (to the shared table first for a named AV).
absl::StatusOr<fi_addr_t> AddEntry(UtilAv& av, const IpAddress& address,
                                   std::optional<fi_addr_t> user_id)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(av.mutex) {
  fi_addr_t fi_addr = av.entries.size();
  if (av.shared != nullptr) {
    absl::StatusOr<fi_addr_t> slot = av.shared->Insert(address);
    if (!slot.ok()) return slot.status();
    fi_addr = *slot;
  }
  if (av.entries.size() <= fi_addr) av.entries.resize(fi_addr + 1);
  av.entries[fi_addr] = AvEntry{address, user_id.value_or(fi_addr)};
  av.index.emplace(AddressKey(address), fi_addr);
  inserts_so_far.fetch_add(1, std::memory_order_release);
  return fi_addr;
}

// Drops one entry of this process's view.
void DropEntry(UtilAv& av, fi_addr_t fi_addr)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(av.mutex) {
  av.index.erase(AddressKey(av.entries[fi_addr]->address));
  av.entries[fi_addr].reset();
  av.drops.fetch_add(1, std::memory_order_release);
}

// Brings a named AV's view up to date with its shared table: published
// slots are added (their user id is their fi_addr_t), removed ones dropped.
void Refresh(UtilAv& av) ABSL_EXCLUSIVE_LOCKS_REQUIRED(av.mutex) {
  SharedAvSnapshot snapshot = av.shared->Snapshot();
  if (snapshot.malformed > 0) {
    FI_WARN(Log(av), FI_LOG_AV, "shared AV: ignoring %zu malformed entries\n",
            snapshot.malformed);
  }
  if (av.entries.size() < snapshot.addresses.size()) {
    av.entries.resize(snapshot.addresses.size());
  }
  for (fi_addr_t i = 0; i < snapshot.addresses.size(); ++i) {
    const std::optional<IpAddress>& shared = snapshot.addresses[i];
    if (shared.has_value() == av.entries[i].has_value()) continue;
    if (shared.has_value()) {
      av.entries[i] = AvEntry{*shared, i};
      av.index.emplace(AddressKey(*shared), i);
      inserts_so_far.fetch_add(1, std::memory_order_release);
    } else {
      DropEntry(av, i);
    }
  }
}

// Inserts already-parsed addresses (or errors), filling fi_addr.
int InsertParsed(UtilAv& av,
                 const std::vector<absl::StatusOr<IpAddress>>& addresses,
                 fi_addr_t* fi_addr, uint64_t flags, void* context) {
  InsertReport report{av, flags, context};
  MutexLock<Mutex> lock(av.mutex);
  for (size_t i = 0; i < addresses.size(); ++i) {
    std::optional<fi_addr_t> user_id;
    if ((flags & FI_AV_USER_ID) && fi_addr != nullptr) user_id = fi_addr[i];
    absl::StatusOr<fi_addr_t> result =
        addresses[i].ok() ? AddEntry(av, *addresses[i], user_id)
                          : addresses[i].status();
    if (!result.ok()) {
      FI_WARN(Log(av), FI_LOG_AV, "fi_av_insert: address %zu: %s\n", i,
              std::string(result.status().message()).c_str());
      if (fi_addr != nullptr) fi_addr[i] = FI_ADDR_NOTAVAIL;
      report.Failed(i, -ToFiErrno(result.status()));
      continue;
    }
    if (fi_addr != nullptr) fi_addr[i] = *result;
    report.Succeeded(i);
  }
  return report.Finish();
}

int InsertAv(fid_av* av_fid, const void* input, size_t count,
             fi_addr_t* fi_addr, uint64_t flags, void* context) {
  UtilAv& av = *ToUtilAv(av_fid);
  if (absl::Status s = CheckInsert(av, input, count, flags, context);
      !s.ok()) {
    return AvFail(av, s);
  }
  std::vector<absl::StatusOr<IpAddress>> addresses;
  const char* next = static_cast<const char*>(input);
  for (size_t i = 0; i < count; ++i) {
    size_t length = UserAddressLength(av.addr_format, next);
    if (length == 0) {
      // The rest cannot be located without this one's length.
      while (addresses.size() < count) {
        addresses.push_back(FiError(FI_EINVAL, "malformed address"));
      }
      break;
    }
    addresses.push_back(IpFromUser(av.addr_format, next, length));
    next += length;
  }
  return InsertParsed(av, addresses, fi_addr, flags, context);
}

int InsertSvcAv(fid_av* av_fid, const char* node, const char* service,
                fi_addr_t* fi_addr, uint64_t flags, void* context) {
  UtilAv& av = *ToUtilAv(av_fid);
  if (node == nullptr || service == nullptr) {
    return AvFail(av, FiError(FI_EINVAL, "fi_av_insertsvc: node and service "
                                         "are required"));
  }
  if (absl::Status s = CheckInsert(av, node, 1, flags, context); !s.ok()) {
    return AvFail(av, s);
  }
  int family = av.addr_format == FI_SOCKADDR_IN    ? AF_INET
               : av.addr_format == FI_SOCKADDR_IN6 ? AF_INET6
                                                   : AF_UNSPEC;
  absl::StatusOr<std::vector<IpAddress>> resolved =
      ResolveIp(node, service, family, /*numeric_host=*/false, false);
  std::vector<absl::StatusOr<IpAddress>> addresses;
  if (resolved.ok()) {
    addresses.push_back(resolved->front());
  } else {
    addresses.push_back(resolved.status());
  }
  return InsertParsed(av, addresses, fi_addr, flags, context);
}

// `base` plus `step`, for FI_AV insertsym's consecutive host addresses.
absl::StatusOr<IpAddress> NextHost(const IpAddress& base, size_t step) {
  IpAddress host = base;
  absl::Span<unsigned char> bytes = host.mutable_host_bytes();
  uint64_t carry = step;
  for (size_t i = bytes.size(); i-- > 0 && carry > 0;) {
    uint64_t sum = bytes[i] + (carry & 0xff);
    bytes[i] = static_cast<unsigned char>(sum);
    carry = (carry >> 8) + (sum >> 8);
  }
  if (carry > 0) return FiError(FI_EINVAL, "insertsym: address overflow");
  return host;
}

int InsertSymAv(fid_av* av_fid, const char* node, size_t nodecnt,
                const char* service, size_t svccnt, fi_addr_t* fi_addr,
                uint64_t flags, void* context) {
  UtilAv& av = *ToUtilAv(av_fid);
  uint32_t port = 0;
  if (node == nullptr || service == nullptr ||
      !absl::SimpleAtoi(service, &port) || port + svccnt > 65536) {
    return AvFail(av, FiError(FI_EINVAL, "fi_av_insertsym: a numeric node and "
                                         "service are required"));
  }
  if (absl::Status s = CheckInsert(av, node, nodecnt * svccnt, flags,
                                   context);
      !s.ok()) {
    return AvFail(av, s);
  }
  absl::StatusOr<std::vector<IpAddress>> base =
      ResolveIp(node, service, AF_UNSPEC, /*numeric_host=*/true, false);
  if (!base.ok()) return AvFail(av, base.status());
  std::vector<absl::StatusOr<IpAddress>> addresses;
  for (size_t n = 0; n < nodecnt; ++n) {
    absl::StatusOr<IpAddress> host = NextHost(base->front(), n);
    for (size_t s = 0; s < svccnt; ++s) {
      if (host.ok()) {
        IpAddress address = *host;
        address.set_port(static_cast<uint16_t>(port + s));
        addresses.push_back(address);
      } else {
        addresses.push_back(host.status());
      }
    }
  }
  return InsertParsed(av, addresses, fi_addr, flags, context);
}

bool Valid(const UtilAv& av, fi_addr_t fi_addr)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(av.mutex) {
  return fi_addr < av.entries.size() && av.entries[fi_addr].has_value();
}

int RemoveAv(fid_av* av_fid, fi_addr_t* fi_addr, size_t count,
             uint64_t flags) {
  UtilAv& av = *ToUtilAv(av_fid);
  if ((fi_addr == nullptr && count > 0) || flags != 0) {
    return AvFail(av, FiError(FI_EINVAL, "fi_av_remove: bad arguments"));
  }
  if (av.flags & FI_READ) {
    return AvFail(av, FiError(FI_EOPNOTSUPP, "fi_av_remove: the AV is opened "
                                             "read-only (FI_READ)"));
  }
  MutexLock<Mutex> lock(av.mutex);
  if (av.shared != nullptr) Refresh(av);
  int rc = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!Valid(av, fi_addr[i])) {
      FI_WARN(Log(av), FI_LOG_AV, "fi_av_remove: fi_addr %llu is not in "
              "the AV\n", static_cast<unsigned long long>(fi_addr[i]));
      rc = -FI_EINVAL;
      continue;
    }
    if (av.shared != nullptr) av.shared->Remove(fi_addr[i]);
    DropEntry(av, fi_addr[i]);
  }
  return rc;
}

// The address in the AV's own format.
std::string Encode(uint32_t format, const IpAddress& address) {
  if (format == FI_ADDR_STR) {
    std::string text = FormatAddrStr(address);
    text.push_back('\0');
    return text;
  }
  return std::string(reinterpret_cast<const char*>(address.sockaddr_ptr()),
                     address.length());
}

int LookupAv(fid_av* av_fid, fi_addr_t fi_addr, void* addr,
             size_t* addrlen) {
  UtilAv& av = *ToUtilAv(av_fid);
  if (addrlen == nullptr || (addr == nullptr && *addrlen > 0)) {
    return AvFail(av, FiError(FI_EINVAL, "fi_av_lookup: bad arguments"));
  }
  absl::StatusOr<IpAddress> address = AvLookupIp(&av, fi_addr);
  if (!address.ok()) return AvFail(av, address.status());
  std::string bytes = Encode(av.addr_format, *address);
  memcpy(addr, bytes.data(), std::min(*addrlen, bytes.size()));
  *addrlen = bytes.size();  // the size needed, even when truncated
  return 0;
}

const char* StraddrAv(fid_av* av_fid, const void* addr, char* buf,
                      size_t* len) {
  UtilAv& av = *ToUtilAv(av_fid);
  if (addr == nullptr || len == nullptr || (buf == nullptr && *len > 0)) {
    return nullptr;
  }
  size_t length = UserAddressLength(av.addr_format, addr);
  absl::StatusOr<IpAddress> address =
      length == 0 ? FiError(FI_EINVAL, "malformed address")
                  : IpFromUser(av.addr_format, addr, length);
  if (!address.ok()) return nullptr;
  std::string text = FormatAddrStr(*address);
  if (*len > 0) {
    size_t n = std::min(*len - 1, text.size());
    memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  *len = text.size() + 1;
  return buf;
}

int CloseAv(fid* object) {
  UtilAv* av = FidCast<UtilAv>(object);
  if (av->open_children.load() > 0) {
    FI_WARN(Log(*av), FI_LOG_AV, "AV still used by %d endpoints or AV sets\n",
            av->open_children.load());
    return -FI_EBUSY;
  }
  if (av->eq != nullptr) av->eq->open_children.fetch_sub(1);
  av->domain->open_children.fetch_sub(1);
  delete av;
  return 0;
}


fi_ops kAvFidOps = MakeFidOps({.close = CloseAv, .bind = BindUtilAv});

fi_ops_av kAvOps = {
    .size = sizeof(fi_ops_av),
    .insert = InsertAv,
    .insertsvc = InsertSvcAv,
    .insertsym = InsertSymAv,
    .remove = RemoveAv,
    .lookup = LookupAv,
    .straddr = StraddrAv,
    .av_set = OpenUtilAvSet,
};

// The table of a named AV: created or joined, or with FI_READ mapped
// read-only.
absl::StatusOr<std::unique_ptr<SharedAvTable>> OpenShared(
    const UtilDomain& domain, const fi_av_attr& attr) {
  absl::string_view name(attr.name,
                         strnlen(attr.name, kSharedAvMaxNameLength + 1));
  uint32_t format = domain.info->addr_format;
  return (attr.flags & FI_READ)
             ? SharedAvTable::OpenForRead(name, format)
             : SharedAvTable::OpenForWrite(name, format, attr.count);
}

}  // namespace

absl::Status CheckInsert(const UtilAv& av, const void* input, size_t count,
                         uint64_t flags, void* context) {
  if (av.flags & FI_READ) {
    return FiError(FI_EOPNOTSUPP, "fi_av_insert: the AV is opened read-only "
                                  "(FI_READ)");
  }
  if (input == nullptr && count > 0) {
    return FiError(FI_EINVAL, "fi_av_insert: addr is NULL");
  }
  if ((flags & ~kInsertFlags) != 0) {
    return FiError(FI_EBADFLAGS, "fi_av_insert: unknown flags");
  }
  if ((flags & FI_SYNC_ERR) && context == nullptr) {
    return FiError(FI_EINVAL, "fi_av_insert: FI_SYNC_ERR needs an error "
                              "array as context");
  }
  if ((av.flags & FI_EVENT) && av.eq == nullptr) {
    return FiError(FI_ENOEQ, "fi_av_insert: FI_EVENT AV without a bound EQ");
  }
  return absl::OkStatus();
}

absl::Status CheckAvAttr(const UtilDomain& domain, const fi_av_attr& attr) {
  int type = EnumValue(attr.type);
  if (type < FI_AV_UNSPEC || type > FI_AV_TABLE) {
    return FiError(FI_EINVAL, absl::StrCat("fi_av_open: unknown type ", type));
  }
  fi_av_type domain_type = domain.info->domain_attr->av_type;
  if (type != FI_AV_UNSPEC && domain_type != FI_AV_UNSPEC &&
      type != domain_type) {
    return FiError(FI_EINVAL, "fi_av_open: type differs from the domain's "
                              "av_type");
  }
  if ((attr.flags & ~kAvOpenFlags) != 0) {
    return FiError(FI_EBADFLAGS, "fi_av_open: unknown flags");
  }
  if (attr.rx_ctx_bits != 0) {
    return FiError(FI_ENOSYS, "fi_av_open: rx_ctx_bits need scalable "
                              "endpoints, which are not implemented");
  }
  if ((attr.flags & FI_READ) && attr.name == nullptr) {
    return FiError(FI_EINVAL, "fi_av_open: FI_READ needs a named AV");
  }
  if (attr.name != nullptr &&
      (domain.info->domain_attr->caps & FI_SHARED_AV) == 0) {
    return FiError(FI_ENOSYS, "fi_av_open: named (shared) AVs need a domain "
                              "opened with FI_SHARED_AV");
  }
  return absl::OkStatus();
}

int BindUtilAv(fid* object, fid* bound, uint64_t flags) {
  UtilAv* av = FidCast<UtilAv>(object);
  UtilEq* eq = AsUtilEq(bound);
  if (eq == nullptr || eq->fabric != av->domain->fabric || flags != 0 ||
      av->eq != nullptr) {
    return AvFail(*av, FiError(FI_EINVAL, "fi_av_bind: one EQ of this fabric, "
                                          "with flags 0"));
  }
  eq->open_children.fetch_add(1);
  av->eq = eq;
  return 0;
}

void InsertReport::Failed(size_t i, int fi_errno) {
  if (flags & FI_SYNC_ERR) static_cast<int*>(context)[i] = -fi_errno;
  if (av.eq != nullptr && (av.flags & FI_EVENT)) {
    fi_eq_err_entry error = {};
    error.fid = &av.av_fid.fid;
    error.context = context;
    error.data = i;
    error.err = fi_errno;
    EqPostError(&av.eq->eq_fid, error);
  }
}

void InsertReport::Succeeded(size_t i) {
  if (flags & FI_SYNC_ERR) static_cast<int*>(context)[i] = 0;
  ++inserted;
}

int InsertReport::Finish() {
  if (av.eq == nullptr || !(av.flags & FI_EVENT)) return inserted;
  fi_eq_entry done = {};
  done.fid = &av.av_fid.fid;
  done.context = context;
  done.data = static_cast<uint64_t>(inserted);
  EqPost(&av.eq->eq_fid, FI_AV_COMPLETE, &done, sizeof(done));
  return 0;
}

int AvFail(const UtilAv& av, const absl::Status& status) {
  return LogFailure(Log(av), FI_LOG_AV, status);
}

UtilAv* AsUtilAv(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_AV ||
      object->ops != &kAvFidOps) {
    return nullptr;
  }
  return FidCast<UtilAv>(object);
}

int OpenUtilAv(fid_domain* domain_fid, fi_av_attr* attr, fid_av** av_out,
               void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  absl::Status status =
      attr == nullptr || av_out == nullptr
          ? FiError(FI_EINVAL, "fi_av_open: attr and av must not be NULL")
          : CheckAvAttr(*domain, *attr);
  std::unique_ptr<SharedAvTable> shared;
  if (status.ok() && attr->name != nullptr) {
    absl::StatusOr<std::unique_ptr<SharedAvTable>> opened =
        OpenShared(*domain, *attr);
    if (opened.ok()) shared = std::move(*opened);
    status = opened.status();
  }
  if (!status.ok()) {
    return LogFailure(domain->fabric->provider->c_provider(), FI_LOG_AV,
                      status);
  }
  UtilAv* av = new UtilAv;
  av->av_fid = {};
  InitFid(&av->av_fid.fid, FI_CLASS_AV, context, &kAvFidOps);
  av->av_fid.ops = &kAvOps;
  av->domain = domain;
  av->type = attr->type != FI_AV_UNSPEC ? attr->type : FI_AV_TABLE;
  av->addr_format = domain->info->addr_format;
  av->flags = attr->flags;
  InitAvOwnerFid(av);
  // Not yet seen by any other thread: the lock only satisfies the analysis.
  MutexLock<Mutex> lock(av->mutex);
  if (shared != nullptr) {
    if (attr->map_addr == nullptr) attr->map_addr = shared->base();
    av->shared = std::move(shared);
    Refresh(*av);
  } else {
    av->entries.reserve(attr->count);
  }
  domain->open_children.fetch_add(1);
  *av_out = &av->av_fid;
  return 0;
}

absl::StatusOr<IpAddress> AvLookupIp(UtilAv* av, fi_addr_t fi_addr) {
  MutexLock<Mutex> lock(av->mutex);
  if (!Valid(*av, fi_addr) && av->shared != nullptr) Refresh(*av);
  if (!Valid(*av, fi_addr)) {
    return FiError(FI_EINVAL, absl::StrCat("fi_addr ", fi_addr,
                                           " is not in the AV"));
  }
  return av->entries[fi_addr]->address;
}

absl::StatusOr<const IpAddress*> AvLookupCache::Lookup(UtilAv* av,
                                                      fi_addr_t fi_addr) {
  // Acquire: pairs with DropEntry's release, so a drop that happened before
  // this load is seen.
  uint64_t drops = av->drops.load(std::memory_order_acquire);
  if (av == av_ && fi_addr == fi_addr_ && drops == drops_) return &address_;
  absl::StatusOr<IpAddress> address = AvLookupIp(av, fi_addr);
  if (!address.ok()) {
    av_ = nullptr;
    return address.status();
  }
  av_ = av;
  fi_addr_ = fi_addr;
  drops_ = drops;
  address_ = *address;
  return &address_;
}

uint64_t AvInsertsSoFar() {
  return inserts_so_far.load(std::memory_order_acquire);
}

fi_addr_t AvFindIp(UtilAv* av, const IpAddress& address) {
  MutexLock<Mutex> lock(av->mutex);
  std::string key = AddressKey(address);
  auto it = av->index.find(key);
  if (it == av->index.end() && av->shared != nullptr) {
    Refresh(*av);
    it = av->index.find(key);
  }
  return it == av->index.end() ? FI_ADDR_NOTAVAIL : it->second;
}

std::vector<fi_addr_t> AvAddresses(UtilAv* av) {
  MutexLock<Mutex> lock(av->mutex);
  if (av->shared != nullptr) Refresh(*av);
  std::vector<fi_addr_t> addresses;
  for (fi_addr_t i = 0; i < av->entries.size(); ++i) {
    if (av->entries[i].has_value()) addresses.push_back(i);
  }
  return addresses;
}

}  // namespace fabric

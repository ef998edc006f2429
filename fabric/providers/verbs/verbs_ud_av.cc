#include "fabric/providers/verbs/verbs_ud_av.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"

namespace fabric {
namespace verbs {
namespace {

// A GRH's hop limit: enough for RoCE v2 routed between subnets (a subnet's
// own traffic needs 1).
constexpr uint8_t kHopLimit = 64;

VerbsUdAv* ToUdAv(fid_av* av) { return FidCast<VerbsUdAv>(av); }

std::string SenderKey(const uint8_t* gid, uint32_t qpn) {
  return absl::StrCat(absl::string_view(reinterpret_cast<const char*>(gid), 16),
                      "/", qpn);
}

// The address handle of a send to `name` from `port`.
absl::StatusOr<ibv_ah*> CreateAh(const VerbsUdAv& av, const UdName& name) {
  ibv_ah_attr attr = {};
  attr.is_global = 1;
  memcpy(attr.grh.dgid.raw, name.gid, sizeof(name.gid));
  attr.grh.sgid_index = 0;
  attr.grh.hop_limit = kHopLimit;
  attr.dlid = LidOf(name);
  attr.port_num = av.port.number;
  ibv_ah* ah = av.verbs->api().create_ah(av.verbs->pd(), &attr);
  if (ah == nullptr) return CallFailed("ibv_create_ah");
  return ah;
}

// Adds the peer named by `name`.
absl::StatusOr<fi_addr_t> AddPeer(VerbsUdAv* av, const UdName& name,
                                  std::optional<fi_addr_t> user_id)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(av->util.mutex) {
  absl::StatusOr<ibv_ah*> ah = CreateAh(*av, name);
  if (!ah.ok()) return ah.status();
  const fi_addr_t fi_addr = av->peers.size();
  UdPeer peer;
  peer.name = name;
  peer.destination = UdDestination{*ah, QpnOf(name), QkeyOf(name)};
  peer.user_id = user_id.value_or(fi_addr);
  av->peers.push_back(peer);
  av->by_sender[SenderKey(name.gid, QpnOf(name))].insert(fi_addr);
  return fi_addr;
}

bool Valid(const VerbsUdAv& av, fi_addr_t fi_addr)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(av.util.mutex) {
  return fi_addr < av.peers.size() && av.peers[fi_addr].has_value();
}

int Insert(fid_av* av_fid, const void* input, size_t count,
           fi_addr_t* fi_addr, uint64_t flags, void* context) {
  VerbsUdAv* av = ToUdAv(av_fid);
  if (absl::Status s = CheckInsert(av->util, input, count, flags, context);
      !s.ok()) {
    return AvFail(av->util, s);
  }
  InsertReport report{av->util, flags, context};
  MutexLock<Mutex> lock(av->util.mutex);
  const auto* next = static_cast<const uint8_t*>(input);
  for (size_t i = 0; i < count; ++i, next += sizeof(UdName)) {
    std::optional<fi_addr_t> user_id;
    if ((flags & FI_AV_USER_ID) && fi_addr != nullptr) user_id = fi_addr[i];
    absl::StatusOr<UdName> name = ParseUdName(next, sizeof(UdName));
    absl::StatusOr<fi_addr_t> added =
        name.ok() ? AddPeer(av, *name, user_id) : name.status();
    if (!added.ok()) {
      FI_WARN(av->util.domain->fabric->provider->c_provider(), FI_LOG_AV,
              "fi_av_insert: address %zu: %s\n", i,
              std::string(added.status().message()).c_str());
      if (fi_addr != nullptr) fi_addr[i] = FI_ADDR_NOTAVAIL;
      report.Failed(i, -ToFiErrno(added.status()));
      continue;
    }
    if (fi_addr != nullptr) fi_addr[i] = *added;
    report.Succeeded(i);
  }
  return report.Finish();
}

int InsertSvc(fid_av* av_fid, const char*, const char*, fi_addr_t*, uint64_t,
              void*) {
  return AvFail(ToUdAv(av_fid)->util,
                FiError(FI_ENOSYS, "fi_av_insertsvc: a UD endpoint is named "
                                   "by its fi_getname bytes, not by a node "
                                   "and service"));
}

int InsertSym(fid_av* av_fid, const char*, size_t, const char*, size_t,
              fi_addr_t*, uint64_t, void*) {
  return AvFail(ToUdAv(av_fid)->util,
                FiError(FI_ENOSYS, "fi_av_insertsym: a UD endpoint is named "
                                   "by its fi_getname bytes, not by a node "
                                   "and service"));
}

int Remove(fid_av* av_fid, fi_addr_t* fi_addr, size_t count, uint64_t flags) {
  VerbsUdAv* av = ToUdAv(av_fid);
  if ((fi_addr == nullptr && count > 0) || flags != 0) {
    return AvFail(av->util, FiError(FI_EINVAL, "fi_av_remove: bad "
                                               "arguments"));
  }
  MutexLock<Mutex> lock(av->util.mutex);
  int rc = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!Valid(*av, fi_addr[i])) {
      rc = AvFail(av->util,
                  FiError(FI_EINVAL, absl::StrCat("fi_av_remove: fi_addr ",
                                                  fi_addr[i],
                                                  " is not in the AV")));
      continue;
    }
    UdPeer& peer = *av->peers[fi_addr[i]];
    auto sender = av->by_sender.find(SenderKey(peer.name.gid,
                                               QpnOf(peer.name)));
    if (sender != av->by_sender.end()) {
      sender->second.erase(fi_addr[i]);
      if (sender->second.empty()) av->by_sender.erase(sender);
    }
    if (av->util.domain->info->domain_attr->threading != FI_THREAD_DOMAIN) {
      av->removed_ahs.push_back(peer.destination.ah);
    } else {
      av->verbs->api().destroy_ah(peer.destination.ah);
    }
    av->peers[fi_addr[i]].reset();
    av->util.drops.fetch_add(1, std::memory_order_release);
  }
  return rc;
}

int Lookup(fid_av* av_fid, fi_addr_t fi_addr, void* addr, size_t* addrlen) {
  VerbsUdAv* av = ToUdAv(av_fid);
  if (addrlen == nullptr || (addr == nullptr && *addrlen > 0)) {
    return AvFail(av->util, FiError(FI_EINVAL, "fi_av_lookup: bad "
                                               "arguments"));
  }
  MutexLock<Mutex> lock(av->util.mutex);
  if (!Valid(*av, fi_addr)) {
    return AvFail(av->util,
                  FiError(FI_EINVAL, absl::StrCat("fi_av_lookup: fi_addr ",
                                                  fi_addr,
                                                  " is not in the AV")));
  }
  const UdName& name = av->peers[fi_addr]->name;
  memcpy(addr, &name, std::min(*addrlen, sizeof(name)));
  *addrlen = sizeof(name);  // the size needed, even when truncated
  return 0;
}

const char* Straddr(fid_av*, const void* addr, char* buf, size_t* len) {
  if (addr == nullptr || len == nullptr || (buf == nullptr && *len > 0)) {
    return nullptr;
  }
  UdName name;
  memcpy(&name, addr, sizeof(name));
  const std::string text = UdNameString(name);
  if (*len > 0) {
    const size_t n = std::min(*len - 1, text.size());
    memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  *len = text.size() + 1;
  return buf;
}

int NoAvSet(fid_av* av_fid, fi_av_set_attr*, fid_av_set**, void*) {
  return AvFail(ToUdAv(av_fid)->util,
                FiError(FI_ENOSYS, "fi_av_set: not on verbs datagram AVs"));
}

int Close(fid* object) {
  VerbsUdAv* av = ToUdAv(reinterpret_cast<fid_av*>(object));
  if (av->util.open_children.load() > 0) {
    return AvFail(av->util,
                  FiError(FI_EBUSY, absl::StrCat("AV still used by ",
                                                 av->util.open_children.load(),
                                                 " endpoints")));
  }
  {
    MutexLock<Mutex> lock(av->util.mutex);
    for (std::optional<UdPeer>& peer : av->peers) {
      if (peer.has_value()) av->verbs->api().destroy_ah(peer->destination.ah);
    }
  }
  for (ibv_ah* ah : av->removed_ahs) av->verbs->api().destroy_ah(ah);
  if (av->util.eq != nullptr) av->util.eq->open_children.fetch_sub(1);
  av->util.domain->open_children.fetch_sub(1);
  delete av;
  return 0;
}

fi_ops kUdAvFidOps = MakeFidOps({.close = Close, .bind = BindUtilAv});

fi_ops_av kUdAvOps = {
    .size = sizeof(fi_ops_av),
    .insert = Insert,
    .insertsvc = InsertSvc,
    .insertsym = InsertSym,
    .remove = Remove,
    .lookup = Lookup,
    .straddr = Straddr,
    .av_set = NoAvSet,
};

}  // namespace

absl::StatusOr<UdPort> FindUdPort(const VerbsDomain& domain) {
  const VerbsApi& api = domain.api();
  const int ports = domain.device_attr().phys_port_cnt;
  for (int number = 1; number <= ports; ++number) {
    ibv_port_attr attr = {};
    if (api.QueryPort(domain.context(), static_cast<uint8_t>(number),
                      &attr) != 0 ||
        attr.state != IBV_PORT_ACTIVE || MtuBytes(attr.active_mtu) == 0) {
      continue;
    }
    UdPort port;
    port.number = static_cast<uint8_t>(number);
    port.lid = attr.lid;
    port.active_mtu = attr.active_mtu;
    if (api.query_gid(domain.context(), port.number, 0, &port.gid) != 0) {
      return CallFailed("ibv_query_gid");
    }
    return port;
  }
  return FiError(FI_ENODATA, "the device has no ACTIVE port with a known "
                             "MTU for datagram endpoints");
}

int OpenVerbsUdAv(fid_domain* domain_fid, fi_av_attr* attr, fid_av** av_out,
                  void* context) {
  auto* domain = FidCast<UtilDomain>(domain_fid);
  absl::Status status =
      attr == nullptr || av_out == nullptr
          ? FiError(FI_EINVAL, "fi_av_open: attr and av must not be NULL")
          : CheckAvAttr(*domain, *attr);
  if (status.ok() && attr->name != nullptr) {
    status = FiError(FI_ENOSYS, "fi_av_open: named (shared) AVs are not "
                                "offered on verbs datagram domains");
  }
  VerbsDomain* verbs = ToVerbsDomain(domain);
  absl::StatusOr<UdPort> port =
      status.ok() ? FindUdPort(*verbs) : absl::StatusOr<UdPort>(status);
  if (!port.ok()) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_AV, "%s\n",
            std::string(port.status().message()).c_str());
    return ToFiErrno(port.status());
  }
  auto* av = new VerbsUdAv;
  av->util.av_fid = {};
  InitFid(&av->util.av_fid.fid, FI_CLASS_AV, context, &kUdAvFidOps);
  av->util.av_fid.ops = &kUdAvOps;
  av->util.domain = domain;
  av->util.type = attr->type != FI_AV_UNSPEC ? attr->type : FI_AV_TABLE;
  av->util.addr_format = FI_ADDR_IB_UD;
  av->util.flags = attr->flags;
  av->verbs = verbs;
  av->port = *port;
  // attr->count is a hint: a huge one is not taken as an allocation.
  {
    // Not yet seen by any other thread: the lock only satisfies the
    // analysis.
    MutexLock<Mutex> lock(av->util.mutex);
    av->peers.reserve(std::min<size_t>(attr->count, 1 << 16));
  }
  domain->open_children.fetch_add(1);
  *av_out = &av->util.av_fid;
  return 0;
}

VerbsUdAv* AsVerbsUdAv(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_AV ||
      object->ops != &kUdAvFidOps) {
    return nullptr;
  }
  return ToUdAv(reinterpret_cast<fid_av*>(object));
}

absl::StatusOr<UdDestination> UdDestinationOf(VerbsUdAv* av,
                                              fi_addr_t fi_addr) {
  MutexLock<Mutex> lock(av->util.mutex);
  if (!Valid(*av, fi_addr)) {
    return FiError(FI_EINVAL, absl::StrCat("fi_addr ", fi_addr,
                                           " is not in the AV"));
  }
  return av->peers[fi_addr]->destination;
}

fi_addr_t UdSenderOf(VerbsUdAv* av, const ibv_gid& gid, uint32_t qpn) {
  MutexLock<Mutex> lock(av->util.mutex);
  auto found = av->by_sender.find(SenderKey(gid.raw, qpn));
  if (found == av->by_sender.end()) return FI_ADDR_NOTAVAIL;
  return av->peers[*found->second.begin()]->user_id;
}

}  // namespace verbs
}  // namespace fabric

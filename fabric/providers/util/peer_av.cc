#include "fabric/providers/util/peer_av.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <algorithm>

#include "fabric/providers/util/av.h"
#include "fabric/providers/util/av_set.h"

namespace fabric {
namespace {

UtilAv* OwnerAv(fid_peer_av* peer) {
  return static_cast<UtilAv*>(peer->fid.context);
}

int QueryAv(fid_peer_av* peer, fi_av_attr* attr) {
  if (attr == nullptr) return -FI_EINVAL;
  UtilAv& av = *OwnerAv(peer);
  size_t count = AvAddresses(&av).size();
  *attr = {};
  attr->type = av.type;
  attr->count = count;
  attr->flags = av.flags;
  return 0;
}

fi_addr_t EndpointAddress(fid_peer_av* peer, fid_ep* ep) {
  if (ep == nullptr) return FI_ADDR_NOTAVAIL;
  UtilAv& av = *OwnerAv(peer);
  char name[128];
  size_t len = sizeof(name);
  if (fi_getname(&ep->fid, name, &len) != 0) return FI_ADDR_NOTAVAIL;
  absl::StatusOr<IpAddress> address = IpFromUser(av.addr_format, name, len);
  return address.ok() ? AvFindIp(&av, *address) : FI_ADDR_NOTAVAIL;
}

int Members(fid_peer_av_set* peer, fi_addr_t* addr, size_t* count) {
  if (count == nullptr || (addr == nullptr && *count > 0)) return -FI_EINVAL;
  UtilAvSet& set = *static_cast<UtilAvSet*>(peer->fid.context);
  MutexLock<Mutex> lock(set.mutex);
  size_t have = set.members.size();
  if (*count < have) {
    *count = have;
    return -FI_ETOOSMALL;
  }
  std::copy(set.members.begin(), set.members.end(), addr);
  *count = have;
  return 0;
}

fi_ops_av_owner kAvOwnerOps = {
    .size = sizeof(fi_ops_av_owner),
    .query = QueryAv,
    .ep_addr = EndpointAddress,
};
fi_ops_av_set_owner kAvSetOwnerOps = {
    .size = sizeof(fi_ops_av_set_owner),
    .members = Members,
};

}  // namespace

void InitAvOwnerFid(UtilAv* av) {
  av->owner_fid = {};
  av->owner_fid.fid.fclass = FI_CLASS_PEER_AV;
  av->owner_fid.fid.context = av;
  av->owner_fid.owner_ops = &kAvOwnerOps;
}

void InitAvSetOwnerFid(UtilAvSet* set) {
  set->owner_fid = {};
  set->owner_fid.fid.fclass = FI_CLASS_PEER_AV_SET;
  set->owner_fid.fid.context = set;
  set->owner_fid.owner_ops = &kAvSetOwnerOps;
}

fid_peer_av* UtilAvOwnerFid(UtilAv* av) { return &av->owner_fid; }

fid_peer_av_set* UtilAvSetOwnerFid(UtilAvSet* set) { return &set->owner_fid; }

}  // namespace fabric

#include "fabric/providers/util/av_set.h"

#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/peer_av.h"

namespace fabric {
namespace {

constexpr uint64_t kSetFlags =
    FI_UNIVERSE | FI_BARRIER_SET | FI_BROADCAST_SET | FI_ALLTOALL_SET |
    FI_ALLREDUCE_SET | FI_ALLGATHER_SET | FI_REDUCE_SCATTER_SET |
    FI_REDUCE_SET | FI_SCATTER_SET | FI_GATHER_SET;

UtilAvSet* ToSet(fid_av_set* set) { return FidCast<UtilAvSet>(set); }

bool InAv(UtilAv& av, fi_addr_t fi_addr) {
  return AvLookupIp(&av, fi_addr).ok();
}

// The members fi_av_set_attr asks for: none, the whole AV (FI_UNIVERSE), or
// the AV's addresses from start_addr to end_addr, every stride-th.
absl::StatusOr<std::vector<fi_addr_t>> InitialMembers(
    UtilAv& av, const fi_av_set_attr& attr) {
  if ((attr.flags & ~kSetFlags) != 0) {
    return FiError(FI_EBADFLAGS, "fi_av_set: unknown flags");
  }
  if (attr.comm_key_size != 0 || attr.comm_key != nullptr) {
    return FiError(FI_ENOSYS, "fi_av_set: communication keys need a fabric "
                              "manager, which is not supported");
  }
  bool ranged = attr.start_addr != FI_ADDR_NOTAVAIL ||
                attr.end_addr != FI_ADDR_NOTAVAIL;
  if (!ranged) {
    if (attr.stride != 0) {
      return FiError(FI_EINVAL, "fi_av_set: stride must be 0 without "
                                "start_addr and end_addr");
    }
    if (attr.flags & FI_UNIVERSE) return AvAddresses(&av);
    return std::vector<fi_addr_t>();
  }
  if (attr.flags & FI_UNIVERSE) {
    return FiError(FI_EINVAL, "fi_av_set: FI_UNIVERSE takes the whole AV; "
                              "start_addr and end_addr must be "
                              "FI_ADDR_NOTAVAIL");
  }
  if (av.type != FI_AV_TABLE) {
    return FiError(FI_EINVAL, "fi_av_set: start_addr and end_addr need an "
                              "FI_AV_TABLE AV");
  }
  if (attr.stride == 0 || attr.start_addr > attr.end_addr ||
      !InAv(av, attr.start_addr) || !InAv(av, attr.end_addr)) {
    return FiError(FI_EINVAL,
                   absl::StrCat("fi_av_set: range ", attr.start_addr, "..",
                                attr.end_addr, " stride ", attr.stride,
                                ": both ends must be addresses of the AV, in "
                                "order, and stride at least 1"));
  }
  std::vector<fi_addr_t> members;
  for (fi_addr_t fi_addr : AvAddresses(&av)) {
    if (fi_addr >= attr.start_addr && fi_addr <= attr.end_addr &&
        (fi_addr - attr.start_addr) % attr.stride == 0) {
      members.push_back(fi_addr);
    }
  }
  return members;
}

void Union(std::vector<fi_addr_t>& dst, const std::vector<fi_addr_t>& src) {
  std::unordered_set<fi_addr_t> present(dst.begin(), dst.end());
  for (fi_addr_t fi_addr : src) {
    if (present.insert(fi_addr).second) dst.push_back(fi_addr);
  }
}

// Keeps the members of `dst` that are (keep == true) or are not in `src`.
void Filter(std::vector<fi_addr_t>& dst, const std::vector<fi_addr_t>& src,
            bool keep) {
  std::unordered_set<fi_addr_t> in_src(src.begin(), src.end());
  dst.erase(std::remove_if(dst.begin(), dst.end(),
                           [&](fi_addr_t fi_addr) {
                             return (in_src.count(fi_addr) > 0) != keep;
                           }),
            dst.end());
}

void Intersect(std::vector<fi_addr_t>& dst,
               const std::vector<fi_addr_t>& src) {
  Filter(dst, src, true);
}

void Diff(std::vector<fi_addr_t>& dst, const std::vector<fi_addr_t>& src) {
  Filter(dst, src, false);
}

// Applies `combine` to dst's members with src's, after checking that src is
// an AV set of the same AV. src's members are copied first, so dst == src
// takes one lock.
int Combine(fid_av_set* dst_fid, const fid_av_set* src_fid, const char* call,
            void (*combine)(std::vector<fi_addr_t>&,
                            const std::vector<fi_addr_t>&)) {
  UtilAvSet& dst = *ToSet(dst_fid);
  UtilAvSet* src = AsUtilAvSet(src_fid);
  if (src == nullptr || src->av != dst.av) {
    return AvFail(*dst.av,
                  FiError(FI_EINVAL, absl::StrCat(call, ": src must be an AV "
                                                  "set of the same AV")));
  }
  std::vector<fi_addr_t> other;
  {
    MutexLock<Mutex> lock(src->mutex);
    other = src->members;
  }
  MutexLock<Mutex> lock(dst.mutex);
  combine(dst.members, other);
  return 0;
}

int UnionSet(fid_av_set* dst, const fid_av_set* src) {
  return Combine(dst, src, "fi_av_set_union", Union);
}

int IntersectSet(fid_av_set* dst, const fid_av_set* src) {
  return Combine(dst, src, "fi_av_set_intersect", Intersect);
}

int DiffSet(fid_av_set* dst, const fid_av_set* src) {
  return Combine(dst, src, "fi_av_set_diff", Diff);
}

int InsertSet(fid_av_set* set_fid, fi_addr_t fi_addr) {
  UtilAvSet& set = *ToSet(set_fid);
  if (!InAv(*set.av, fi_addr)) {
    return AvFail(*set.av, FiError(FI_EINVAL,
                                   absl::StrCat("fi_av_set_insert: fi_addr ",
                                                fi_addr, " is not in the AV")));
  }
  MutexLock<Mutex> lock(set.mutex);
  if (std::find(set.members.begin(), set.members.end(), fi_addr) !=
      set.members.end()) {
    return AvFail(*set.av, FiError(FI_EINVAL,
                                   absl::StrCat("fi_av_set_insert: fi_addr ",
                                                fi_addr, " is in the set")));
  }
  set.members.push_back(fi_addr);
  return 0;
}

int RemoveSet(fid_av_set* set_fid, fi_addr_t fi_addr) {
  UtilAvSet& set = *ToSet(set_fid);
  MutexLock<Mutex> lock(set.mutex);
  auto it = std::find(set.members.begin(), set.members.end(), fi_addr);
  if (it == set.members.end()) {
    return AvFail(
        *set.av,
        FiError(FI_EINVAL, absl::StrCat("fi_av_set_remove: fi_addr ", fi_addr,
                                        " is not in the set")));
  }
  set.members.erase(it);
  return 0;
}

// The set's address is the set itself; only collective operations take it,
// and they are not implemented.
int AddrSet(fid_av_set* set_fid, fi_addr_t* coll_addr) {
  UtilAvSet& set = *ToSet(set_fid);
  if (coll_addr == nullptr) {
    return AvFail(*set.av,
                  FiError(FI_EINVAL, "fi_av_set_addr: coll_addr is NULL"));
  }
  *coll_addr = reinterpret_cast<uintptr_t>(&set.set_fid);
  return 0;
}

int CloseSet(fid* object) {
  UtilAvSet* set = FidCast<UtilAvSet>(object);
  set->av->open_children.fetch_sub(1);
  delete set;
  return 0;
}

fi_ops kAvSetFidOps = MakeFidOps({.close = CloseSet});

fi_ops_av_set kAvSetOps = {
    .size = sizeof(fi_ops_av_set),
    .set_union = UnionSet,
    .intersect = IntersectSet,
    .diff = DiffSet,
    .insert = InsertSet,
    .remove = RemoveSet,
    .addr = AddrSet,
};

}  // namespace

UtilAvSet* AsUtilAvSet(const fid_av_set* set) {
  if (set == nullptr || set->fid.fclass != FI_CLASS_AV_SET ||
      set->fid.ops != &kAvSetFidOps) {
    return nullptr;
  }
  return FidCast<UtilAvSet>(const_cast<fid_av_set*>(set));
}

int OpenUtilAvSet(fid_av* av_fid, fi_av_set_attr* attr, fid_av_set** set_out,
                  void* context) {
  UtilAv& av = *FidCast<UtilAv>(av_fid);
  if (attr == nullptr || set_out == nullptr) {
    return AvFail(av, FiError(FI_EINVAL, "fi_av_set: attr and av_set must "
                                         "not be NULL"));
  }
  absl::StatusOr<std::vector<fi_addr_t>> members = InitialMembers(av, *attr);
  if (!members.ok()) return AvFail(av, members.status());
  UtilAvSet* set = new UtilAvSet;
  set->set_fid = {};
  InitFid(&set->set_fid.fid, FI_CLASS_AV_SET, context, &kAvSetFidOps);
  set->set_fid.ops = &kAvSetOps;
  set->av = &av;
  {
    // Not yet seen by any other thread: the lock only satisfies the
    // analysis.
    MutexLock<Mutex> lock(set->mutex);
    set->members = std::move(*members);
  }
  InitAvSetOwnerFid(set);
  av.open_children.fetch_add(1);
  *set_out = &set->set_fid;
  return 0;
}

}  // namespace fabric

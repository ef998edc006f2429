#include "fabric/providers/util/poll_set.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {
namespace {

struct Member {
  fid* object;
  UtilCq* cq;      // one of cq and cntr is set
  UtilCntr* cntr;
  uint64_t seen_value = 0;   // counters: the counts at the last fi_poll
  uint64_t seen_errors = 0;
};

struct UtilPollSet {
  fid_poll poll_fid;  // first: the application's fid_poll* is this
  UtilDomain* domain;
  Mutex mutex;
  std::vector<Member> members ABSL_GUARDED_BY(mutex);
};
FABRIC_BEGINS_WITH(UtilPollSet, poll_fid);

UtilPollSet* ToUtilPollSet(fid_poll* pollset) {
  return FidCast<UtilPollSet>(pollset);
}

std::atomic<int>& HeldCount(const Member& member) {
  return member.cq != nullptr ? member.cq->open_children
                              : member.cntr->open_children;
}

int ClosePollSet(fid* object) {
  UtilPollSet* set = ToUtilPollSet(reinterpret_cast<fid_poll*>(object));
  {
    MutexLock<Mutex> lock(set->mutex);
    for (const Member& member : set->members) HeldCount(member).fetch_sub(1);
  }
  set->domain->open_children.fetch_sub(1);
  delete set;
  return 0;
}

bool HasNews(Member& member) {
  if (member.cq != nullptr) {
    MutexLock lock(member.cq->wait->mutex());
    return !member.cq->entries.empty();
  }
  MutexLock lock(member.cntr->wait->mutex());
  bool changed = member.cntr->value != member.seen_value ||
                 member.cntr->errors != member.seen_errors;
  member.seen_value = member.cntr->value;
  member.seen_errors = member.cntr->errors;
  return changed;
}

int Poll(fid_poll* pollset, void** context, int count) {
  UtilPollSet* set = ToUtilPollSet(pollset);
  if (count < 0 || (count > 0 && context == nullptr)) return -FI_EINVAL;
  set->domain->progress->Run();
  MutexLock<Mutex> lock(set->mutex);
  int found = 0;
  for (Member& member : set->members) {
    if (found == count) break;
    if (HasNews(member)) context[found++] = member.object->context;
  }
  return found;
}

int PollAdd(fid_poll* pollset, fid* object, uint64_t flags) {
  UtilPollSet* set = ToUtilPollSet(pollset);
  Member member = {object, AsUtilCq(object), AsUtilCntr(object)};
  UtilDomain* owner = member.cq != nullptr     ? member.cq->domain
                      : member.cntr != nullptr ? member.cntr->domain
                                               : nullptr;
  if (owner != set->domain || flags != 0) {
    FI_WARN(set->domain->fabric->provider->c_provider(), FI_LOG_CQ,
            "fi_poll_add: a CQ or counter of this domain, flags 0\n");
    return -FI_EINVAL;
  }
  MutexLock<Mutex> lock(set->mutex);
  for (const Member& existing : set->members) {
    if (existing.object == object) return -FI_EALREADY;
  }
  HeldCount(member).fetch_add(1);
  set->members.push_back(member);
  return 0;
}

int PollDel(fid_poll* pollset, fid* object, uint64_t flags) {
  UtilPollSet* set = ToUtilPollSet(pollset);
  if (flags != 0) return -FI_EINVAL;
  MutexLock<Mutex> lock(set->mutex);
  auto it = std::find_if(
      set->members.begin(), set->members.end(),
      [object](const Member& member) { return member.object == object; });
  if (it == set->members.end()) return -FI_EINVAL;
  HeldCount(*it).fetch_sub(1);
  set->members.erase(it);
  return 0;
}

fi_ops kPollSetFidOps = MakeFidOps({.close = ClosePollSet});
fi_ops_poll kPollSetOps = {
    .size = sizeof(fi_ops_poll),
    .poll = Poll,
    .poll_add = PollAdd,
    .poll_del = PollDel,
};

}  // namespace

int OpenUtilPollSet(fid_domain* domain_fid, fi_poll_attr* attr,
                    fid_poll** pollset) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  if (pollset == nullptr || (attr != nullptr && attr->flags != 0)) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_DOMAIN,
            "fi_poll_open: pollset must not be NULL; flags must be 0\n");
    return -FI_EINVAL;
  }
  UtilPollSet* set = new UtilPollSet;
  set->poll_fid = {};
  InitFid(&set->poll_fid.fid, FI_CLASS_POLL, nullptr, &kPollSetFidOps);
  set->poll_fid.ops = &kPollSetOps;
  set->domain = domain;
  domain->open_children.fetch_add(1);
  *pollset = &set->poll_fid;
  return 0;
}

}  // namespace fabric

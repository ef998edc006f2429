#include "fabric/providers/util/wait_set.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"

namespace fabric {
namespace {

UtilWaitSet* ToUtilWaitSet(fid* object) { return FidCast<UtilWaitSet>(object); }

int CloseWaitSet(fid* object) {
  UtilWaitSet* set = ToUtilWaitSet(object);
  if (set->state.members.load() > 0) {
    FI_WARN(set->fabric->provider->c_provider(), FI_LOG_FABRIC,
            "wait set still has %d members\n", set->state.members.load());
    return -FI_EBUSY;
  }
  set->fabric->open_children.fetch_sub(1);
  delete set;
  return 0;
}

int ControlWaitSet(fid* object, int command, void* arg) {
  return ToUtilWaitSet(object)->state.wait->Control(command, arg);
}

constexpr int kSetSliceMillis = 1;

void AdvanceMembers(WaitSetState& state) {
  std::vector<ProgressEngine*> engines;
  {
    MutexLock lock(state.engines_mutex);
    for (const auto& [engine, count] : state.engines) {
      if (engine != nullptr) engines.push_back(engine);
    }
  }
  for (ProgressEngine* engine : engines) engine->Run();
}

// fi_wait: 0 once a member has signalled since the last fi_wait,
// -FI_ETIMEDOUT after `timeout` ms (negative: no limit).
int WaitOnSet(fid_wait* waitset, int timeout) {
  WaitSetState& state = ToUtilWaitSet(&waitset->fid)->state;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(std::max(timeout, 0));
  CondLock lock(state.wait->mutex());
  // The members' sources advance while the set waits, a slice at a time.
  while (!state.signaled) {
    int slice = kSetSliceMillis;
    if (timeout >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return -FI_ETIMEDOUT;
      slice = std::min<int>(slice, static_cast<int>(left.count()));
    }
    lock.get().unlock();  // the members' engines take their own locks
    AdvanceMembers(state);
    lock.get().lock();
    if (state.signaled) break;
    state.wait->Wait(lock, slice,
                     [&state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                         state.wait->mutex()) { return state.signaled; });
  }
  state.signaled = false;
  state.wait->Clear();
  return 0;
}

fi_ops kWaitSetFidOps =
    MakeFidOps({.close = CloseWaitSet, .control = ControlWaitSet});
fi_ops_wait kWaitSetOps = {
    .size = sizeof(fi_ops_wait),
    .wait = WaitOnSet,
};

UtilWaitSet* AsUtilWaitSet(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_WAIT ||
      object->ops != &kWaitSetFidOps) {
    return nullptr;
  }
  return ToUtilWaitSet(object);
}

}  // namespace

int OpenUtilWaitSet(fid_fabric* fabric_fid, fi_wait_attr* attr,
                    fid_wait** waitset) {
  UtilFabric* fabric = ToUtilFabric(fabric_fid);
  const fi_provider* log = fabric->provider->c_provider();
  if (attr == nullptr || waitset == nullptr) {
    FI_WARN(log, FI_LOG_FABRIC, "fi_wait_open: attr and waitset are NULL\n");
    return -FI_EINVAL;
  }
  if (attr->flags != 0) {
    FI_WARN(log, FI_LOG_FABRIC, "fi_wait_open: flags must be 0\n");
    return -FI_EBADFLAGS;
  }
  int kind = EnumValue(attr->wait_obj);
  if (kind == FI_WAIT_NONE || kind == FI_WAIT_SET) {
    FI_WARN(log, FI_LOG_FABRIC,
            "fi_wait_open: a set needs a wait object "
            "an application can block on\n");
    return -FI_EINVAL;
  }
  absl::StatusOr<std::unique_ptr<WaitObject>> wait =
      WaitObject::Create(kind, nullptr, fabric->progress.get());
  if (!wait.ok()) {
    FI_WARN(log, FI_LOG_FABRIC, "fi_wait_open: %s\n",
            std::string(wait.status().message()).c_str());
    return ToFiErrno(wait.status());
  }
  UtilWaitSet* set = new UtilWaitSet;
  set->wait_fid = {};
  InitFid(&set->wait_fid.fid, FI_CLASS_WAIT, nullptr, &kWaitSetFidOps);
  set->wait_fid.ops = &kWaitSetOps;
  set->fabric = fabric;
  set->state.wait = *std::move(wait);
  fabric->open_children.fetch_add(1);
  *waitset = &set->wait_fid;
  return 0;
}

absl::StatusOr<std::unique_ptr<WaitObject>> CreateWaitObject(
    int kind, fid_wait* set, const UtilFabric& fabric, ProgressEngine* engine) {
  if (kind != FI_WAIT_SET) return WaitObject::Create(kind, nullptr, engine);
  UtilWaitSet* wait_set = AsUtilWaitSet(set != nullptr ? &set->fid : nullptr);
  if (wait_set == nullptr || wait_set->fabric != &fabric) {
    return FiError(FI_EINVAL,
                   "FI_WAIT_SET without a wait set of this "
                   "fabric");
  }
  return WaitObject::Create(kind, &wait_set->state, engine);
}

}  // namespace fabric

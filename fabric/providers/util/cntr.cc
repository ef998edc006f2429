#include "fabric/providers/util/cntr.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/wait_set.h"

namespace fabric {
namespace {

UtilCntr* ToUtilCntr(fid_cntr* cntr) { return FidCast<UtilCntr>(cntr); }

const fi_provider* Log(const UtilCntr& cntr) {
  return cntr.domain->fabric->provider->c_provider();
}

int CloseCntr(fid* object) {
  UtilCntr* cntr = FidCast<UtilCntr>(object);
  if (cntr->open_children.load() > 0) {
    FI_WARN(Log(*cntr), FI_LOG_CNTR, "counter still bound to %d objects\n",
            cntr->open_children.load());
    return -FI_EBUSY;
  }
  cntr->domain->cntr_count.fetch_sub(1);
  cntr->domain->open_children.fetch_sub(1);
  delete cntr;
  return 0;
}

int ControlCntr(fid* object, int command, void* arg) {
  return FidCast<UtilCntr>(object)->wait->Control(command, arg);
}

enum class Count { kValue, kErrors };
enum class Update { kAdd, kSet };

// Adds `value` to the count `which`, or sets it to `value`, under the lock,
// and wakes waiters.
int Change(fid_cntr* cntr_fid, Count which, Update update, uint64_t value) {
  UtilCntr& cntr = *ToUtilCntr(cntr_fid);
  MutexLock lock(cntr.wait->mutex());
  uint64_t& count = which == Count::kErrors ? cntr.errors : cntr.value;
  count = update == Update::kAdd ? count + value : value;
  cntr.wait->Signal();
  return 0;
}

uint64_t ReadCntr(fid_cntr* cntr_fid) {
  UtilCntr& cntr = *ToUtilCntr(cntr_fid);
  cntr.wait->Progress();
  MutexLock lock(cntr.wait->mutex());
  return cntr.value;
}

uint64_t ReadErrCntr(fid_cntr* cntr_fid) {
  UtilCntr& cntr = *ToUtilCntr(cntr_fid);
  cntr.wait->Progress();
  MutexLock lock(cntr.wait->mutex());
  return cntr.errors;
}

int AddCntr(fid_cntr* cntr, uint64_t value) {
  return Change(cntr, Count::kValue, Update::kAdd, value);
}
int SetCntr(fid_cntr* cntr, uint64_t value) {
  return Change(cntr, Count::kValue, Update::kSet, value);
}
int AddErrCntr(fid_cntr* cntr, uint64_t value) {
  return Change(cntr, Count::kErrors, Update::kAdd, value);
}
int SetErrCntr(fid_cntr* cntr, uint64_t value) {
  return Change(cntr, Count::kErrors, Update::kSet, value);
}

// Returns 0 once the count reaches `threshold`, -FI_EAVAIL when the error
// count changes first, -FI_ETIMEDOUT after `timeout` ms (negative: none).
int WaitCntr(fid_cntr* cntr_fid, uint64_t threshold, int timeout) {
  UtilCntr& cntr = *ToUtilCntr(cntr_fid);
  if (!cntr.wait->can_block()) {
    FI_WARN(Log(cntr), FI_LOG_CNTR,
            "fi_cntr_wait on a counter opened with FI_WAIT_NONE\n");
    return -FI_EINVAL;
  }
  CondLock lock(cntr.wait->mutex());
  const uint64_t errors = cntr.errors;
  bool woke = cntr.wait->Wait(
      lock, timeout,
      [&cntr, threshold, errors]()
          ABSL_EXCLUSIVE_LOCKS_REQUIRED(cntr.wait->mutex()) {
            return cntr.value >= threshold || cntr.errors != errors;
          });
  if (cntr.errors != errors) return -FI_EAVAIL;
  return woke ? 0 : -FI_ETIMEDOUT;
}

fi_ops kCntrFidOps = MakeFidOps({.close = CloseCntr, .control = ControlCntr});

fi_ops_cntr kCntrOps = {
    .size = sizeof(fi_ops_cntr),
    .read = ReadCntr,
    .readerr = ReadErrCntr,
    .add = AddCntr,
    .set = SetCntr,
    .wait = WaitCntr,
    .adderr = AddErrCntr,
    .seterr = SetErrCntr,
};

absl::Status CheckAttr(const UtilDomain& domain, const fi_cntr_attr& attr) {
  if (attr.flags != 0) return FiError(FI_EBADFLAGS, "fi_cntr_open: flags");
  if (EnumValue(attr.events) != FI_CNTR_EVENTS_COMP) {
    return FiError(FI_EINVAL, absl::StrCat("fi_cntr_open: unknown events ",
                                           EnumValue(attr.events)));
  }
  size_t limit = domain.info->domain_attr->cntr_cnt;
  if (static_cast<size_t>(domain.cntr_count.load()) >= limit) {
    return FiError(FI_ENOSPC, absl::StrCat("fi_cntr_open: the domain's "
                                           "cntr_cnt (",
                                           limit, ") counters are open"));
  }
  return absl::OkStatus();
}

}  // namespace

UtilCntr* AsUtilCntr(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_CNTR ||
      object->ops != &kCntrFidOps) {
    return nullptr;
  }
  return FidCast<UtilCntr>(object);
}

int OpenUtilCntr(fid_domain* domain_fid, fi_cntr_attr* attr,
                 fid_cntr** cntr_out, void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  // A NULL attr means the defaults (fi_cntr(3)).
  fi_cntr_attr defaults = {};
  const fi_cntr_attr& effective = attr != nullptr ? *attr : defaults;
  absl::Status status = cntr_out == nullptr
                            ? FiError(FI_EINVAL, "fi_cntr_open: cntr is NULL")
                            : CheckAttr(*domain, effective);
  absl::StatusOr<std::unique_ptr<WaitObject>> wait =
      status.ok()
          ? CreateWaitObject(EnumValue(effective.wait_obj), effective.wait_set,
                             *domain->fabric, domain->progress.get())
          : status;
  if (!wait.ok()) {
    FI_WARN(domain->fabric->provider->c_provider(), FI_LOG_CNTR, "%s\n",
            std::string(wait.status().message()).c_str());
    return ToFiErrno(wait.status());
  }
  UtilCntr* cntr = new UtilCntr;
  cntr->cntr_fid = {};
  InitFid(&cntr->cntr_fid.fid, FI_CLASS_CNTR, context, &kCntrFidOps);
  cntr->cntr_fid.ops = &kCntrOps;
  cntr->domain = domain;
  cntr->wait = *std::move(wait);
  domain->cntr_count.fetch_add(1);
  domain->open_children.fetch_add(1);
  *cntr_out = &cntr->cntr_fid;
  return 0;
}

void CntrAdd(UtilCntr* cntr, uint64_t value) {
  AddCntr(&cntr->cntr_fid, value);
}

void CntrAddError(UtilCntr* cntr, uint64_t value) {
  AddErrCntr(&cntr->cntr_fid, value);
}

int CntrTryWait(fid* object) {
  UtilCntr* cntr = AsUtilCntr(object);
  if (cntr == nullptr) return -FI_EINVAL;
  cntr->wait->Progress();
  if (!cntr->wait->PrepareToSleep()) return -FI_EAGAIN;
  MutexLock lock(cntr->wait->mutex());
  cntr->wait->Clear();
  return 0;
}

}  // namespace fabric

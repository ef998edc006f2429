#include "fabric/providers/util/passive_ep.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <string>
#include <vector>

#include "fabric/api/core/status.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace {

// An fi_eq_cm_entry with `len` bytes of data after it.
std::vector<char> CmEntry(fid* endpoint, fi_info* info, const void* data,
                          size_t len) {
  std::vector<char> buf(sizeof(fi_eq_cm_entry) + len);
  fi_eq_cm_entry entry = {};
  entry.fid = endpoint;
  entry.info = info;
  memcpy(buf.data(), &entry, sizeof(entry));
  if (len > 0) memcpy(buf.data() + sizeof(entry), data, len);
  return buf;
}

int GetPepOpt(fid* object, int level, int name, void* value, size_t* len) {
  auto* pep = FidCast<UtilPep>(object);
  if (value == nullptr || len == nullptr) {
    return FailPep(*pep,
                   FiError(FI_EINVAL, "fi_getopt: optval and optlen needed"));
  }
  if (level != FI_OPT_ENDPOINT || name != FI_OPT_CM_DATA_SIZE) {
    return -FI_ENOPROTOOPT;
  }
  return CopySizeOpt(pep->cm_data_size, value, len);
}

int SetPepOpt(fid*, int, int, const void*, size_t) { return -FI_ENOPROTOOPT; }

fi_ops_ep PepEpOps() {
  fi_ops_ep ops = kNoEpOps;
  ops.getopt = GetPepOpt;
  ops.setopt = SetPepOpt;
  return ops;
}

fi_ops_ep kPepEpOps = PepEpOps();

}  // namespace

int FailPep(const UtilPep& pep, const absl::Status& status) {
  return LogFailure(pep.log(), FI_LOG_EP_CTRL, status);
}

absl::Status InitUtilPep(UtilPep* pep, UtilFabric* fabric, const fi_info& info,
                         void* context, fi_ops* fid_ops, fi_ops_cm* cm_ops,
                         size_t cm_data_size) {
  pep->info = DupInfo(info);
  if (pep->info == nullptr) {
    return FiError(FI_ENOMEM, "fi_passive_ep: out of memory");
  }
  pep->info->handle = nullptr;
  pep->pep_fid = {};
  InitFid(&pep->pep_fid.fid, FI_CLASS_PEP, context, fid_ops);
  pep->pep_fid.ops = &kPepEpOps;
  pep->pep_fid.cm = cm_ops;
  pep->cm_data_size = cm_data_size;
  pep->fabric = fabric;
  fabric->open_children.fetch_add(1);
  AddLiveObject(&pep->pep_fid.fid, fabric->provider->name(), fabric->name,
                &fabric->fabric_fid.fid);
  return absl::OkStatus();
}

void ReleaseUtilPep(UtilPep* pep) {
  if (pep->eq != nullptr) pep->eq->open_children.fetch_sub(1);
  RemoveLiveObject(&pep->pep_fid.fid);
  pep->fabric->open_children.fetch_sub(1);
}

int BindUtilPep(fid* object, fid* bound, uint64_t flags) {
  auto* pep = FidCast<UtilPep>(object);
  MutexLock lock(pep->mutex);
  UtilEq* eq = AsUtilEq(bound);
  if (eq == nullptr || eq->fabric != pep->fabric || flags != 0 ||
      pep->eq != nullptr) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "fi_pep_bind: one EQ of the passive endpoint's fabric, flags "
            "0\n");
    return -FI_EINVAL;
  }
  eq->open_children.fetch_add(1);
  pep->eq = eq;
  return 0;
}

int ControlUtilPep(fid*, int command, void*) {
  return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

bool PostConnReq(UtilPep* pep, InfoPtr info, const void* data, size_t len) {
  if (pep->eq == nullptr) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "refusing a connection request: no EQ bound\n");
    return false;
  }
  fi_info* request = info.release();
  std::vector<char> buf = CmEntry(&pep->pep_fid.fid, request, data, len);
  if (EqPost(&pep->eq->eq_fid, FI_CONNREQ, buf.data(), buf.size()) < 0) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "EQ full: refusing a connection request\n");
    fi_freeinfo(request);
    return false;
  }
  return true;
}

void PostConnectionEvent(fid_eq* eq, fid* endpoint, uint32_t event,
                         const void* data, size_t len, const fi_provider* log) {
  std::vector<char> buf = CmEntry(endpoint, nullptr, data, len);
  if (EqPost(eq, event, buf.data(), buf.size()) < 0) {
    FI_WARN(log, FI_LOG_EP_CTRL, "EQ full: a CM event was lost\n");
  }
}

void PostConnectionError(fid_eq* eq, fid* endpoint, int err, int prov_errno,
                         const void* data, size_t len) {
  fi_eq_err_entry error = {};
  error.fid = endpoint;
  error.context = endpoint->context;
  error.err = err;
  error.prov_errno = prov_errno;
  error.err_data = len > 0 ? const_cast<void*>(data) : nullptr;
  error.err_data_size = len;
  EqPostError(eq, error);
}

}  // namespace fabric

#include "fabric/providers/util/fabric.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "fabric/providers/util/cntr.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/wait_set.h"

namespace fabric {
namespace {

int CloseFabric(fid* object) {
  UtilFabric* fabric = FidCast<UtilFabric>(object);
  if (fabric->open_children.load() > 0) {
    FI_WARN(fabric->provider->c_provider(), FI_LOG_FABRIC,
            "fabric %s still has %d open objects\n", fabric->name.c_str(),
            fabric->open_children.load());
    return -FI_EBUSY;
  }
  RemoveLiveObject(object);
  delete fabric;
  return 0;
}

int OpenDomain(fid_fabric* fabric, fi_info* info, fid_domain** domain,
               void* context) {
  return OpenUtilDomain(fabric, info, domain, 0, context);
}

// fi_trywait: 0 when every object is empty (the application may block on
// their wait objects), -FI_EAGAIN when one has entries to read first.
int TryWait(fid_fabric* fabric, fid** objects, int count) {
  if (count < 0 || (count > 0 && objects == nullptr)) return -FI_EINVAL;
  ToUtilFabric(fabric)->progress->Run();
  for (int i = 0; i < count; ++i) {
    fid* object = objects[i];
    size_t fclass = object != nullptr ? object->fclass : size_t{FI_CLASS_UNSPEC};
    int rc = fclass == FI_CLASS_CQ     ? CqTryWait(object)
             : fclass == FI_CLASS_CNTR ? CntrTryWait(object)
                                       : EqTryWait(object);
    if (rc != 0) return rc;
  }
  return 0;
}

int OpenPassiveEp(fid_fabric* fabric, fi_info* info, fid_pep** pep,
                  void* context) {
  const Provider& provider = *ToUtilFabric(fabric)->provider;
  if (info != nullptr && info->ep_attr != nullptr &&
      info->ep_attr->type != FI_EP_MSG) {
    FI_WARN(provider.c_provider(), FI_LOG_EP_CTRL,
            "fi_passive_ep: only FI_EP_MSG endpoints listen\n");
    return -FI_EINVAL;
  }
  return provider.OpenPassiveEndpoint(fabric, info, pep, context);
}

fi_ops kFabricFidOps = MakeFidOps({.close = CloseFabric});

fi_ops_fabric kFabricOps = {
    .size = sizeof(fi_ops_fabric),
    .domain = OpenDomain,
    .passive_ep = OpenPassiveEp,
    .eq_open = OpenUtilEq,
    .wait_open = OpenUtilWaitSet,
    .trywait = TryWait,
    .domain2 = OpenUtilDomain,
};

}  // namespace

int OpenUtilFabric(const Provider& provider, const fi_fabric_attr& attr,
                   fid_fabric** fabric_out, void* context) {
  UtilFabric* fabric = new UtilFabric;
  fabric->fabric_fid = {};
  InitFid(&fabric->fabric_fid.fid, FI_CLASS_FABRIC, context, &kFabricFidOps);
  fabric->fabric_fid.ops = &kFabricOps;
  fabric->fabric_fid.api_version = attr.api_version;
  fabric->provider = &provider;
  fabric->name = attr.name;
  AddLiveObject(&fabric->fabric_fid.fid, provider.name(), fabric->name);
  *fabric_out = &fabric->fabric_fid;
  return 0;
}

}  // namespace fabric

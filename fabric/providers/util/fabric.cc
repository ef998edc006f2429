#include "fabric/providers/util/fabric.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "fabric/providers/util/live_objects.h"

namespace fabric {
namespace {

int CloseFabric(fid* object) {
  UtilFabric* fabric = reinterpret_cast<UtilFabric*>(object);
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

int NoBind(fid*, fid*, uint64_t) { return -FI_ENOSYS; }
int NoControl(fid*, int, void*) { return -FI_ENOSYS; }
int NoOpsOpen(fid*, const char*, uint64_t, void**, void*) {
  return -FI_ENOSYS;
}
int NoTostr(const fid*, char*, size_t) { return -FI_ENOSYS; }
int NoOpsSet(fid*, const char*, uint64_t, void*, void*) { return -FI_ENOSYS; }

// Domains, passive endpoints, EQs and wait sets arrive with the domain and
// IP-provider work; until then they are not implemented.
int NoDomain(fid_fabric*, fi_info*, fid_domain**, void*) { return -FI_ENOSYS; }
int NoPassiveEp(fid_fabric*, fi_info*, fid_pep**, void*) { return -FI_ENOSYS; }
int NoEqOpen(fid_fabric*, fi_eq_attr*, fid_eq**, void*) { return -FI_ENOSYS; }
int NoWaitOpen(fid_fabric*, fi_wait_attr*, fid_wait**) { return -FI_ENOSYS; }
int NoTrywait(fid_fabric*, fid**, int) { return -FI_ENOSYS; }
int NoDomain2(fid_fabric*, fi_info*, fid_domain**, uint64_t, void*) {
  return -FI_ENOSYS;
}

fi_ops kFabricFidOps = {
    sizeof(fi_ops), CloseFabric, NoBind, NoControl, NoOpsOpen, NoTostr,
    NoOpsSet,
};

fi_ops_fabric kFabricOps = {
    sizeof(fi_ops_fabric), NoDomain, NoPassiveEp, NoEqOpen, NoWaitOpen,
    NoTrywait, NoDomain2,
};

}  // namespace

int OpenUtilFabric(const Provider& provider, const fi_fabric_attr& attr,
                   fid_fabric** fabric_out, void* context) {
  UtilFabric* fabric = new UtilFabric;
  fabric->fabric_fid = {};
  fabric->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
  fabric->fabric_fid.fid.context = context;
  fabric->fabric_fid.fid.ops = &kFabricFidOps;
  fabric->fabric_fid.ops = &kFabricOps;
  fabric->fabric_fid.api_version = attr.api_version;
  fabric->provider = &provider;
  fabric->name = attr.name;
  AddLiveObject(&fabric->fabric_fid.fid, provider.name(), fabric->name);
  *fabric_out = &fabric->fabric_fid;
  return 0;
}

}  // namespace fabric

// fi_fabric, fi_open and fi_version: the C entry points that open top-level
// objects.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <strings.h>

#include "fabric/api/config/settings.h"
#include "fabric/api/core/export.h"
#include "fabric/api/core/hints.h"
#include "fabric/api/core/status.h"
#include "fabric/api/entry/getinfo.h"
#include "fabric/api/entry/registry.h"
#include "fabric/providers/util/memory_monitor.h"

extern "C" {

FABRIC_EXPORT uint32_t fi_version(void) { return fabric::kApiVersion; }

FABRIC_EXPORT int fi_fabric(struct fi_fabric_attr* attr,
                            struct fid_fabric** fabric, void* context) {
  const fi_provider* core = fabric::CoreProvider();
  if (attr == nullptr || fabric == nullptr) {
    FI_WARN(core, FI_LOG_CORE, "attr and fabric must not be NULL\n");
    return -FI_EINVAL;
  }
  if (attr->name == nullptr || attr->prov_name == nullptr) {
    FI_WARN(core, FI_LOG_CORE,
            "attr->name and attr->prov_name must name a fabric from "
            "fi_getinfo\n");
    return -FI_EINVAL;
  }
  if (attr->api_version != 0) {
    int rc = fabric::ToFiErrno(fabric::CheckVersion(attr->api_version));
    if (rc != 0) {
      FI_WARN(core, FI_LOG_CORE, "attr->api_version is not supported\n");
      return rc;
    }
  }
  int rc = fabric::ToFiErrno(fabric::EnsureConfigLoaded());
  if (rc != 0) return rc;
  for (const fabric::Provider* provider : fabric::EnabledProviders()) {
    if (!fabric::ProviderNameMatches(attr->prov_name, provider->name())) {
      continue;
    }
    fi_fabric_attr effective = *attr;
    if (effective.api_version == 0) effective.api_version = fabric::kApiVersion;
    return provider->OpenFabric(effective, fabric, context);
  }
  FI_WARN(core, FI_LOG_CORE, "no enabled provider named '%s'\n",
          attr->prov_name);
  return -FI_ENODATA;
}

FABRIC_EXPORT int fi_open(uint32_t version, const char* name, void* attr,
                          size_t attr_len, uint64_t flags, struct fid** fid,
                          void* context) {
  const fi_provider* core = fabric::CoreProvider();
  if (name == nullptr || fid == nullptr) {
    FI_WARN(core, FI_LOG_CORE, "name and fid must not be NULL\n");
    return -FI_EINVAL;
  }
  int rc = fabric::ToFiErrno(fabric::CheckVersion(version));
  if (rc != 0) return rc;
  if (strcasecmp(name, "logging") == 0) {
    if (attr != nullptr || attr_len != 0) {
      FI_WARN(core, FI_LOG_CORE, "fi_open(\"logging\") takes no attr\n");
      return -FI_EINVAL;
    }
    return fabric::OpenLogging(version, flags, fid, context);
  }
  if (strcasecmp(name, "mr_cache") == 0) {
    // Its fi_import_fid takes the application's memory monitor.
    return fabric::OpenMrCacheFid(fid, context);
  }
  FI_WARN(core, FI_LOG_CORE, "fi_open: no object named '%s'\n", name);
  return -FI_ENOSYS;
}

}  // extern "C"

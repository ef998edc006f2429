// File: fabric/providers/util/fabric.h
//
// The fabric object shared by all providers (fi_fabric(3)). It counts the
// objects opened on it so fi_close returns -FI_EBUSY while any is open.
// Operations whose provider support has not landed yet return -FI_ENOSYS.
#ifndef FABRIC_PROVIDERS_UTIL_FABRIC_H_
#define FABRIC_PROVIDERS_UTIL_FABRIC_H_

#include <rdma/fabric.h>

#include <atomic>
#include <memory>
#include <string>

#include "fabric/providers/provider.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/progress.h"

namespace fabric {

struct UtilFabric {
  fid_fabric fabric_fid;  // first: the application's fid_fabric* is this
  const Provider* provider;
  std::string name;
  std::atomic<int> open_children{0};
  // Advances fabric-level sources: passive endpoints and connections being
  // set up (EQ reads and waits run it). Endpoints' data paths are their
  // domain's (UtilDomain::progress).
  std::unique_ptr<ProgressEngine> progress = std::make_unique<ProgressEngine>();
};
FABRIC_BEGINS_WITH(UtilFabric, fabric_fid);

// The UtilFabric behind an application's fid_fabric (one of ours).
inline UtilFabric* ToUtilFabric(fid_fabric* fabric) {
  return FidCast<UtilFabric>(fabric);
}

// Opens a fabric named attr.name for `provider` (the caller has checked that
// the provider reports that fabric).
int OpenUtilFabric(const Provider& provider, const fi_fabric_attr& attr,
                   fid_fabric** fabric, void* context);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_FABRIC_H_

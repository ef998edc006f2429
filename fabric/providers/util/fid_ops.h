// File: fabric/providers/util/fid_ops.h
//
// The generic operations (struct fi_ops) of the objects the utility layer
// hands out. An object supplies what it supports; every other entry returns
// -FI_ENOSYS, so an application calling it gets a clear answer.
#ifndef FABRIC_PROVIDERS_UTIL_FID_OPS_H_
#define FABRIC_PROVIDERS_UTIL_FID_OPS_H_

#include <rdma/fabric.h>

namespace fabric {

struct FidOpsSpec {
  int (*close)(fid* object) = nullptr;  // required
  int (*bind)(fid* object, fid* bound, uint64_t flags) = nullptr;
  int (*control)(fid* object, int command, void* arg) = nullptr;
  int (*ops_open)(fid* object, const char* name, uint64_t flags, void** ops,
                  void* context) = nullptr;
  int (*ops_set)(fid* object, const char* name, uint64_t flags, void* ops,
                 void* context) = nullptr;
};

// The fi_ops table for `spec`, with -FI_ENOSYS entries where it has none.
fi_ops MakeFidOps(const FidOpsSpec& spec);

// Fills the fid header every object starts with.
inline void InitFid(fid* object, size_t fclass, void* context, fi_ops* ops) {
  object->fclass = fclass;
  object->context = context;
  object->ops = ops;
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_FID_OPS_H_

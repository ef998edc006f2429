#include "fabric/providers/util/fid_ops.h"

#include <rdma/fi_errno.h>

namespace fabric {
namespace {

int NoBind(fid*, fid*, uint64_t) { return -FI_ENOSYS; }
int NoControl(fid*, int, void*) { return -FI_ENOSYS; }
int NoOpsOpen(fid*, const char*, uint64_t, void**, void*) {
  return -FI_ENOSYS;
}
int NoTostr(const fid*, char*, size_t) { return -FI_ENOSYS; }
int NoOpsSet(fid*, const char*, uint64_t, void*, void*) { return -FI_ENOSYS; }

}  // namespace

fi_ops MakeFidOps(const FidOpsSpec& spec) {
  fi_ops ops = {};
  ops.size = sizeof(fi_ops);
  ops.close = spec.close;
  ops.bind = spec.bind != nullptr ? spec.bind : NoBind;
  ops.control = spec.control != nullptr ? spec.control : NoControl;
  ops.ops_open = spec.ops_open != nullptr ? spec.ops_open : NoOpsOpen;
  ops.tostr = NoTostr;
  ops.ops_set = spec.ops_set != nullptr ? spec.ops_set : NoOpsSet;
  return ops;
}

}  // namespace fabric

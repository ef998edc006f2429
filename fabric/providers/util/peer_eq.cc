#include "fabric/providers/util/peer_eq.h"

#include <rdma/fi_errno.h>

#include "fabric/api/core/status.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/error_entry.h"

namespace fabric {
namespace {

fid_eq* OwnerOf(fid_eq* peer) { return FidCast<UtilEq>(peer)->owner; }

ssize_t PeerRead(fid_eq*, uint32_t*, void*, size_t, uint64_t) {
  return -FI_ENOSYS;
}
ssize_t PeerReadErr(fid_eq*, fi_eq_err_entry*, uint64_t) { return -FI_ENOSYS; }
ssize_t PeerWrite(fid_eq* eq, uint32_t event, const void* buf, size_t len,
                  uint64_t flags) {
  return fi_eq_write(OwnerOf(eq), event, buf, len, flags);
}
ssize_t PeerSread(fid_eq*, uint32_t*, void*, size_t, int, uint64_t) {
  return -FI_ENOSYS;
}
const char* PeerStrerror(fid_eq*, int prov_errno, const void*, char* buf,
                         size_t len) {
  return ErrorText(prov_errno, buf, len);
}

}  // namespace

fi_ops_eq kPeerEqOps = {
    .size = sizeof(fi_ops_eq),
    .read = PeerRead,
    .readerr = PeerReadErr,
    .write = PeerWrite,
    .sread = PeerSread,
    .strerror = PeerStrerror,
};

absl::StatusOr<fid_eq*> ImportedPeerEq(const void* context) {
  const auto* peer_context = static_cast<const fi_peer_eq_context*>(context);
  if (peer_context == nullptr ||
      peer_context->size < sizeof(fi_peer_eq_context) ||
      peer_context->eq == nullptr || peer_context->eq->ops == nullptr ||
      peer_context->eq->ops->write == nullptr) {
    return FiError(FI_EINVAL, "fi_eq_open: FI_PEER needs a struct "
                              "fi_peer_eq_context with the owner's fid_eq");
  }
  return peer_context->eq;
}

ssize_t ForwardEvent(fid_eq* owner, uint32_t event, const void* buf,
                     size_t len) {
  if (AsUtilEq(&owner->fid) != nullptr) return EqPost(owner, event, buf, len);
  return fi_eq_write(owner, event, buf, len, 0);
}

ssize_t ForwardError(fid_eq* owner, const fi_eq_err_entry& error) {
  if (AsUtilEq(&owner->fid) != nullptr) return EqPostError(owner, error);
  ssize_t rc = fi_eq_write(owner, 0, &error, sizeof(error), kEqWriteError);
  return rc < 0 ? rc : 0;
}

}  // namespace fabric

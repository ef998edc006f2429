#include "fabric/providers/util/peer_cq.h"

#include <rdma/fi_errno.h>

#include "fabric/api/core/status.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/error_entry.h"

namespace fabric {
namespace {

UtilCq* OwnerCq(fid_peer_cq* peer) {
  return static_cast<UtilCq*>(peer->fid.context);
}

ssize_t OwnerWrite(fid_peer_cq* peer, void* context, uint64_t flags,
                   size_t len, void* buf, uint64_t data, uint64_t tag,
                   fi_addr_t src) {
  fi_cq_tagged_entry entry = {};
  entry.op_context = context;
  entry.flags = flags;
  entry.len = len;
  entry.buf = buf;
  entry.data = data;
  entry.tag = tag;
  return CqWrite(OwnerCq(peer), entry, src);
}

ssize_t OwnerWriteErr(fid_peer_cq* peer, const fi_cq_err_entry* error) {
  if (error == nullptr) return -FI_EINVAL;
  return CqWriteError(OwnerCq(peer), *error);
}

fi_ops_cq_owner kOwnerOps = {
    .size = sizeof(fi_ops_cq_owner),
    .write = OwnerWrite,
    .writeerr = OwnerWriteErr,
};

// fi_cq_read(cq, NULL, 0) advances the peer's progress; reading entries
// is the owner's business.
ssize_t PeerRead(fid_cq* cq, void* buf, size_t count) {
  if (buf != nullptr || count != 0) return -FI_ENOSYS;
  FidCast<UtilCq>(cq)->wait->Progress();
  return 0;
}

ssize_t PeerReadFrom(fid_cq*, void*, size_t, fi_addr_t*) {
  return -FI_ENOSYS;
}
ssize_t PeerReadErr(fid_cq*, fi_cq_err_entry*, uint64_t) { return -FI_ENOSYS; }
ssize_t PeerSread(fid_cq*, void*, size_t, const void*, int) {
  return -FI_ENOSYS;
}
ssize_t PeerSreadFrom(fid_cq*, void*, size_t, fi_addr_t*, const void*, int) {
  return -FI_ENOSYS;
}
int PeerSignal(fid_cq*) { return -FI_ENOSYS; }
const char* PeerStrerror(fid_cq*, int prov_errno, const void*, char* buf,
                         size_t len) {
  return ErrorText(prov_errno, buf, len);
}

}  // namespace

fi_ops_cq kPeerCqOps = {
    .size = sizeof(fi_ops_cq),
    .read = PeerRead,
    .readfrom = PeerReadFrom,
    .readerr = PeerReadErr,
    .sread = PeerSread,
    .sreadfrom = PeerSreadFrom,
    .signal = PeerSignal,
    .strerror = PeerStrerror,
};

absl::StatusOr<fid_peer_cq*> ImportedPeerCq(const void* context) {
  const auto* peer_context = static_cast<const fi_peer_cq_context*>(context);
  if (peer_context == nullptr ||
      peer_context->size < sizeof(fi_peer_cq_context) ||
      peer_context->cq == nullptr || peer_context->cq->owner_ops == nullptr ||
      peer_context->cq->owner_ops->write == nullptr ||
      peer_context->cq->owner_ops->writeerr == nullptr) {
    return FiError(FI_EINVAL, "fi_cq_open: FI_PEER needs a struct "
                              "fi_peer_cq_context with the owner's "
                              "fid_peer_cq and its write/writeerr");
  }
  return peer_context->cq;
}

void InitOwnerFid(UtilCq* cq) {
  cq->owner_fid = {};
  cq->owner_fid.fid.fclass = FI_CLASS_PEER_CQ;
  cq->owner_fid.fid.context = cq;
  cq->owner_fid.owner_ops = &kOwnerOps;
}

fid_peer_cq* UtilCqOwnerFid(UtilCq* cq) {
  cq->owner_fid_exported.store(true);
  return &cq->owner_fid;
}

UtilCq* OwnerUtilCq(const fid_peer_cq* peer) {
  if (peer == nullptr || peer->owner_ops != &kOwnerOps) return nullptr;
  return static_cast<UtilCq*>(peer->fid.context);
}

}  // namespace fabric

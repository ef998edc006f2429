// FI_PEEK, FI_CLAIM and FI_DISCARD on tagged receives of stream endpoints.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {
namespace {

// Writes `entry` (from `source`) to the receive CQ when the operation asks
// for one, in the room reserved for it.
void Report(StreamEp* ep, const PostedRecv& recv,
            const fi_cq_tagged_entry& entry, fi_addr_t source) {
  UtilCq* cq = ep->util.rx_cq;
  if (recv.write_entry && cq != nullptr) {
    CqWrite(cq, entry, source, recv.reserved);
  } else if (recv.reserved) {
    CqUnreserve(cq);
  }
}

ssize_t Peek(StreamEp* ep, std::unique_ptr<PostedRecv> recv) {
  fi_cq_tagged_entry entry = {};
  entry.op_context = recv->context;
  entry.flags = FI_RECV | FI_TAGGED;
  auto it = FindUnexpected(ep, *recv);
  if (it == ep->unexpected.end()) {
    entry.tag = recv->tag;
    fi_cq_err_entry error = ErrorEntryOf(entry, FI_ENOMSG, 0);
    error.prov_errno = FI_ENOMSG;
    if (ep->util.rx_cq != nullptr) {
      CqWriteError(ep->util.rx_cq, error, recv->reserved);
    }
    return 0;
  }
  const Header& header = it->header;
  entry.len = header.size;
  entry.tag = header.tag;
  if (header.flags & kRemoteData) {
    entry.flags |= FI_REMOTE_CQ_DATA;
    entry.data = header.data;
  }
  fi_addr_t source = it->source;
  if (recv->flags & FI_CLAIM) {
    ep->claimed.insert_or_assign(recv->context, TakeUnexpected(ep, it));
  } else if (recv->flags & FI_DISCARD) {
    DiscardUnexpected(TakeUnexpected(ep, it));
  }
  Report(ep, *recv, entry, source);
  return 0;
}

ssize_t Claim(StreamEp* ep, std::unique_ptr<PostedRecv> recv) {
  auto claimed = ep->claimed.find(recv->context);
  if (claimed == ep->claimed.end()) {
    if (recv->reserved) CqUnreserve(ep->util.rx_cq);
    FI_WARN(ep->log(), FI_LOG_EP_DATA,
            "FI_CLAIM: no message was claimed with this context\n");
    return -FI_EINVAL;
  }
  UnexpectedMsg message = std::move(claimed->second);
  ep->claimed.erase(claimed);
  if (recv->flags & FI_DISCARD) {
    DiscardUnexpected(message);
    if (recv->reserved) CqUnreserve(ep->util.rx_cq);
    return 0;
  }
  DeliverUnexpected(ep, std::move(message), std::move(recv));
  return 0;
}

}  // namespace

ssize_t PeekOrClaim(StreamEp* ep, std::unique_ptr<PostedRecv> recv) {
  return (recv->flags & FI_PEEK) ? Peek(ep, std::move(recv))
                                 : Claim(ep, std::move(recv));
}

}  // namespace stream
}  // namespace fabric

// An endpoint's receive queues: posted receives (untagged and tagged) and
// the unexpected tagged messages waiting for one, and the senders they
// name.
#include <algorithm>

#include "fabric/api/core/address.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/av.h"

namespace fabric {
namespace stream {

fi_addr_t FindSender(const StreamEp& ep, const std::vector<char>& name) {
  if (name.empty() || ep.util.av == nullptr) return FI_ADDR_NOTAVAIL;
  absl::StatusOr<IpAddress> address =
      IpFromUser(ep.util.info->addr_format, name.data(), name.size());
  return address.ok() ? AvFindIp(ep.util.av, *address) : FI_ADDR_NOTAVAIL;
}

void ResolveQueuedSenders(StreamEp* ep) {
  uint64_t inserts = AvInsertsSoFar();
  bool named = ep->util.av != nullptr && ep->util.av->shared != nullptr;
  if (inserts == ep->av_inserts_seen && !named) return;
  ep->av_inserts_seen = inserts;
  for (UnexpectedMsg& message : ep->unexpected) {
    if (message.source != FI_ADDR_NOTAVAIL) continue;
    message.source = message.peer_entry != nullptr
                         ? FindQueuedPeerSender(*message.peer_entry)
                         : FindSender(*ep, message.sender_name);
    if (message.source == FI_ADDR_NOTAVAIL) continue;
    message.sender_name.clear();
    if (message.peer_entry != nullptr) {
      message.peer_entry->addr = message.source;
    }
  }
  for (fi_peer_rx_entry* entry : ep->queued_peer_msgs) {
    if (entry->addr == FI_ADDR_NOTAVAIL) {
      entry->addr = FindQueuedPeerSender(*entry);
    }
  }
}

std::list<UnexpectedMsg>::iterator FindUnexpected(StreamEp* ep,
                                                  const PostedRecv& recv) {
  ResolveQueuedSenders(ep);
  for (auto it = ep->unexpected.begin(); it != ep->unexpected.end(); ++it) {
    if (!TagMatches(recv, it->header.tag)) continue;
    if (ep->directed_recv && recv.source != FI_ADDR_UNSPEC &&
        recv.source != it->source) {
      continue;
    }
    return it;
  }
  return ep->unexpected.end();
}

UnexpectedMsg TakeUnexpected(StreamEp* ep,
                             std::list<UnexpectedMsg>::iterator it) {
  UnexpectedMsg message = std::move(*it);
  ep->unexpected.erase(it);
  if (message.peer_entry == nullptr) {
    ep->unexpected_bytes -= message.header.size;
  }
  return message;
}

void DiscardUnexpected(const UnexpectedMsg& message) {
  if (message.peer_entry != nullptr) {
    fi_peer_rx_entry* entry = message.peer_entry;
    entry->srx->peer_ops->discard_tag(entry);
    return;
  }
  if ((message.header.flags & kAckRequested) && message.link != nullptr) {
    SendAnswer(message.link, Op::kAck, message.header.id, 0);
  }
}

void DeliverUnexpected(StreamEp* ep, UnexpectedMsg message,
                       std::unique_ptr<PostedRecv> recv) {
  if (message.peer_entry != nullptr) {
    StartPeerEntry(ep, message.peer_entry, std::move(recv));
    return;
  }
  size_t placed = std::min(message.data.size(), recv->capacity);
  ssize_t copied = ep->util.domain->copier.CopyToIov(
      recv->iface, recv->device, recv->iov.data(), recv->iov.size(), 0,
      message.data.data(), placed);
  if (copied < 0) {
    fi_cq_tagged_entry entry = {};
    entry.op_context = recv->context;
    entry.flags = FI_RECV | FI_TAGGED;
    ReportError(&ep->util, ep->util.rx_cq, recv->reserved, entry,
                static_cast<int>(-copied), 0, kRecvCntr);
    return;
  }
  if (message.source == FI_ADDR_NOTAVAIL) {
    message.source = FindSender(*ep, message.sender_name);
  }
  CompleteRecv(ep, message.link, message.source, std::move(recv),
               message.header, placed);
}

void PostTaggedRecv(StreamEp* ep, std::unique_ptr<PostedRecv> recv) {
  auto it = FindUnexpected(ep, *recv);
  if (it == ep->unexpected.end()) {
    ep->tagged_recvs.push_back(std::move(recv));
    return;
  }
  DeliverUnexpected(ep, TakeUnexpected(ep, it), std::move(recv));
}

void FailReceives(StreamEp* ep, int err) {
  auto fail = [ep, err](std::unique_ptr<PostedRecv> recv) {
    fi_cq_tagged_entry entry = {};
    entry.op_context = recv->context;
    entry.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG);
    ReportError(&ep->util, ep->util.rx_cq, recv->reserved, entry, err, 0,
                kRecvCntr);
  };
  for (auto& recv : ep->recvs) fail(std::move(recv));
  ep->recvs.clear();
  for (auto& recv : ep->tagged_recvs) fail(std::move(recv));
  ep->tagged_recvs.clear();
}

void UnreserveReceives(StreamEp* ep) {
  for (const auto& recv : ep->recvs) {
    if (recv->reserved) CqUnreserve(ep->util.rx_cq);
  }
  for (const auto& recv : ep->tagged_recvs) {
    if (recv->reserved) CqUnreserve(ep->util.rx_cq);
  }
}

void PostedRecv::Reset() {
  std::vector<iovec> kept_iov = std::move(iov);
  std::vector<void*> kept_desc = std::move(desc);
  *this = PostedRecv();
  kept_iov.clear();
  kept_desc.clear();
  iov = std::move(kept_iov);
  desc = std::move(kept_desc);
}

}  // namespace stream
}  // namespace fabric

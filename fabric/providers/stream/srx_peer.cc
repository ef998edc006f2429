// A StreamEp as the peer of a peer SRX owner (srx.h): receive buffers
// come from the owner's queues.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <utility>

#include "fabric/providers/stream/srx.h"

namespace fabric {
namespace stream {
namespace {

fid_peer_srx* OwnerOf(const StreamEp* ep) { return ep->peer_srx->owner; }

// The owner's buffer in `entry` as a receive of this endpoint's: what the
// data path places into and completes.
std::unique_ptr<PostedRecv> RecvOf(StreamEp* ep, const fi_peer_rx_entry& entry,
                                   bool tagged) {
  std::unique_ptr<PostedRecv> recv = ep->spare_recvs.Take();
  recv->context = entry.context;
  recv->iov.assign(entry.iov, entry.iov + entry.count);
  for (const iovec& piece : recv->iov) recv->capacity += piece.iov_len;
  recv->tagged = tagged;
  recv->tag = entry.tag;
  recv->write_entry = true;
  recv->completion_flags = entry.flags & FI_MULTI_RECV;
  return recv;
}

// start_*/discard_*: recorded for the endpoint's progress to finish.
int Record(fi_peer_rx_entry* entry, bool discard) {
  auto* held = static_cast<PeerHeldMsg*>(entry->peer_context);
  if (held == nullptr) return -FI_EINVAL;
  StreamEp* ep = held->ep;
  std::lock_guard<std::mutex> lock(ep->started_mutex);
  ep->started.emplace_back(held, discard);
  ep->any_started.store(true, std::memory_order_release);
  return 0;
}
int Start(fi_peer_rx_entry* entry) { return Record(entry, false); }
int Discard(fi_peer_rx_entry* entry) { return Record(entry, true); }

}  // namespace

fi_ops_srx_peer kPeerSrxOps = {
    .size = sizeof(fi_ops_srx_peer),
    .start_msg = Start,
    .start_tag = Start,
    .discard_msg = Discard,
    .discard_tag = Discard,
};

int BindPeerSrx(StreamEp* ep, PeerSrx* srx, uint64_t flags) {
  const char* refusal = nullptr;
  if (flags != 0) refusal = "fi_ep_bind: a peer SRX binds with flags 0";
  if (srx->domain != ep->util.domain) {
    refusal = "fi_ep_bind: peer SRX of another domain";
  }
  if (ep->peer_srx != nullptr) refusal = "fi_ep_bind: a peer SRX is bound";
  if (ep->util.info->ep_attr->type != FI_EP_RDM && !srx->msg_endpoints) {
    refusal = "fi_ep_bind: only RDM endpoints take a peer SRX";
  }
  if (ep->util.enabled.load()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "fi_ep_bind: the endpoint is enabled\n");
    return -FI_EOPBADSTATE;
  }
  if (refusal != nullptr) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n", refusal);
    return -FI_EINVAL;
  }
  ep->peer_srx = srx;
  srx->bound_eps.fetch_add(1);
  return 0;
}

bool PeerSrxTakeWhole(Link* link, const Header& header, const char* payload) {
  StreamEp* ep = link->ep;
  // As PeerSrxHeader: the messages the owner matched before go first, and
  // a full CQ holds the message (before the owner is asked).
  FinishStartedPeerMsgs(ep);
  UtilCq* cq = ep->util.rx_cq;  // none: a counter counts receives
  if (cq != nullptr && CqFull(cq)) return false;
  fid_peer_srx* srx = OwnerOf(ep);
  // An owner of ours fills its receive itself: no entry lent and freed.
  OwnersRecvFill fill =
      FillOwnersRecv(srx, link->peer, header, payload, ep->util.domain->copier);
  if (fill.failed != nullptr) {
    // As a failed copy on the general way: FailOutstanding fails it.
    link->current_recv = std::move(fill.failed);
    link->connection.Close(fill.error);
    return true;
  }
  if (fill.taken) {
    ReportSuccess(&ep->util, ep->util.rx_cq, /*write_entry=*/true,
                  /*reserved=*/false, fill.completion, link->peer, kRecvCntr);
    return true;
  }
  bool tagged = header.op == static_cast<uint8_t>(Op::kTagged);
  fi_peer_rx_entry* entry = nullptr;
  int rc = tagged
               ? srx->owner_ops->get_tag(srx, link->peer, header.tag, &entry)
               : srx->owner_ops->get_msg(srx, link->peer, header.size, &entry);
  size_t capacity = 0;
  for (size_t i = 0; rc == 0 && i < entry->count; ++i) {
    capacity += entry->iov[i].iov_len;
  }
  if (rc != 0 || capacity < header.size) {
    link->owner_answer = {entry, rc, true};  // PeerSrxHeader goes on
    return false;
  }
  ssize_t copied = FillWhole(ep->util.domain->copier, entry->iov, entry->count,
                             payload, header.size);
  if (copied < 0) {
    // As a failed copy on the general way: FailOutstanding fails the
    // receive and gives the entry back.
    link->current_recv = RecvOf(ep, *entry, tagged);
    link->peer_entry = entry;
    link->connection.Close(static_cast<int>(copied));
    return true;
  }
  // What CompleteRecv reports for RecvOf(entry), without making one.
  fi_cq_tagged_entry completion = RecvCompletion(
      entry->context, tagged, entry->flags & FI_MULTI_RECV,
      entry->count > 0 ? entry->iov[0].iov_base : nullptr, header, header.size);
  ReportSuccess(&ep->util, ep->util.rx_cq, /*write_entry=*/true,
                /*reserved=*/false, completion, link->peer, kRecvCntr);
  ReturnPeerEntry(ep, entry);
  return true;
}

RxTarget PeerSrxHeader(Link* link, const Header& header) {
  StreamEp* ep = link->ep;
  bool tagged = header.op == static_cast<uint8_t>(Op::kTagged);
  fi_peer_rx_entry* entry = nullptr;
  int rc = 0;
  if (link->owner_answer.given) {
    // Asked by TakeWholeMessage, with the room checked then.
    entry = link->owner_answer.entry;
    rc = link->owner_answer.rc;
    link->owner_answer = {};
  } else {
    // Messages the owner matched before this one complete before it does:
    // a receive posted after theirs may be the one this message gets.
    FinishStartedPeerMsgs(ep);
    // The owner's receive reserved no room in this endpoint's CQ.
    if (WaitForRxCqRoom(ep)) return RxTarget{RxTarget::kStall};
    fid_peer_srx* srx = OwnerOf(ep);
    rc = tagged ? srx->owner_ops->get_tag(srx, link->peer, header.tag, &entry)
                : srx->owner_ops->get_msg(srx, link->peer, header.size, &entry);
  }
  if (rc != 0 && rc != -FI_ENOENT) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA,
            "the peer SRX owner gave no buffer (%s): message dropped\n",
            fi_strerror(-rc));
    link->refused = true;
    return RxTarget{RxTarget::kDiscard};
  }
  link->peer_entry = entry;
  if (rc == 0) {
    link->current_recv = RecvOf(link->ep, *entry, tagged);
    RxTarget target;
    target.kind = RxTarget::kUser;
    target.iov = link->current_recv->iov.data();
    target.iov_count = link->current_recv->iov.size();
    target.capacity = link->current_recv->capacity;
    return target;
  }
  entry->size = header.size;
  link->current_unexpected.emplace();
  link->current_unexpected->header = header;
  link->current_unexpected->link = link;
  link->current_unexpected->source = link->peer;
  if (link->peer == FI_ADDR_NOTAVAIL) {
    link->current_unexpected->sender_name = link->peer_name;
  }
  link->current_unexpected->data.reserve(header.size);
  RxTarget target;
  target.kind = RxTarget::kBuffer;
  target.buffer = &link->current_unexpected->data;
  return target;
}

void PeerSrxMessageDone(Link* link, const Header& header, size_t placed) {
  StreamEp* ep = link->ep;
  fi_peer_rx_entry* entry = std::exchange(link->peer_entry, nullptr);
  if (!link->current_unexpected.has_value()) {
    CompleteRecv(ep, link, link->peer, std::move(link->current_recv), header,
                 placed);
    ReturnPeerEntry(ep, entry);
    return;
  }
  PeerHeldMsg& held = ep->peer_held.emplace_back();
  held.message = std::move(*link->current_unexpected);
  link->current_unexpected.reset();
  held.entry = entry;
  held.tagged = header.op == static_cast<uint8_t>(Op::kTagged);
  held.ep = ep;
  held.self = std::prev(ep->peer_held.end());
  entry->peer_context = &held;
  fid_peer_srx* srx = OwnerOf(ep);
  int rc = held.tagged ? srx->owner_ops->queue_tag(entry)
                       : srx->owner_ops->queue_msg(entry);
  if (rc != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA,
            "the peer SRX owner did not queue a message (%s): dropped\n",
            fi_strerror(-rc));
    DiscardUnexpected(held.message);
    ReturnPeerEntry(ep, entry);
    ep->peer_held.erase(held.self);
  }
}

const UnexpectedMsg* QueuedPeerMessage(const fi_peer_rx_entry& entry) {
  if (entry.srx == nullptr || entry.srx->peer_ops != &kPeerSrxOps ||
      entry.peer_context == nullptr) {
    return nullptr;
  }
  return &static_cast<const PeerHeldMsg*>(entry.peer_context)->message;
}

fi_addr_t FindQueuedPeerSender(const fi_peer_rx_entry& entry) {
  if (QueuedPeerMessage(entry) == nullptr) return FI_ADDR_NOTAVAIL;
  const auto* held = static_cast<const PeerHeldMsg*>(entry.peer_context);
  return FindSender(*held->ep, held->message.sender_name);
}

void ReturnPeerEntry(StreamEp* ep, fi_peer_rx_entry* entry) {
  OwnerOf(ep)->owner_ops->free_entry(entry);
}

void FinishStartedPeerMsgs(StreamEp* ep) {
  if (!ep->any_started.load(std::memory_order_acquire)) return;
  std::vector<std::pair<PeerHeldMsg*, bool>> started;
  {
    std::lock_guard<std::mutex> lock(ep->started_mutex);
    started.swap(ep->started);
    ep->any_started.store(false, std::memory_order_relaxed);
  }
  for (auto [held, discarded] : started) {
    fi_peer_rx_entry* entry = held->entry;
    if (discarded) {
      DiscardUnexpected(held->message);
    } else {
      DeliverUnexpected(ep, std::move(held->message),
                        RecvOf(ep, *entry, held->tagged));
    }
    ReturnPeerEntry(ep, entry);
    ep->peer_held.erase(held->self);
  }
}

void ReleasePeerSrx(StreamEp* ep) {
  if (ep->peer_srx == nullptr) return;
  for (PeerHeldMsg& held : ep->peer_held) ReturnPeerEntry(ep, held.entry);
  ep->peer_held.clear();
  std::lock_guard<std::mutex> lock(ep->started_mutex);
  ep->started.clear();
  ep->any_started.store(false, std::memory_order_relaxed);
  ep->peer_srx->bound_eps.fetch_sub(1);
  ep->peer_srx = nullptr;
}

}  // namespace stream
}  // namespace fabric

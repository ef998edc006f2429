// A StreamEp as the owner of a peer SRX (srx.h): the owner ops, and
// handing posted receives to queued peer messages.
#include <rdma/fi_errno.h>

#include <algorithm>
#include <mutex>

#include "fabric/providers/stream/srx.h"

namespace fabric {
namespace stream {
namespace {

StreamEp* EpOf(const fid_peer_srx* srx) {
  return static_cast<StreamEp*>(srx->ep_fid.fid.context);
}

// Freed entries kept for reuse, at most.
constexpr size_t kMaxSparePeerEntries = 64;

// A new entry lent to the peer (a spare one when there is one): what the
// message is known by.
fi_peer_rx_entry* NewEntry(StreamEp* ep, fi_addr_t addr, size_t size,
                           uint64_t tag, bool tagged) {
  PeerRxEntry* owned = nullptr;
  if (!ep->spare_peer_entries.empty()) {
    owned = ep->spare_peer_entries.back();
    ep->spare_peer_entries.pop_back();
  } else {
    auto made = std::make_unique<PeerRxEntry>();
    owned = made.get();
    owned->slot = ep->peer_entries.size();
    ep->peer_entries.push_back(std::move(made));
  }
  owned->lent = true;
  owned->queued = false;
  fi_peer_rx_entry* entry = &owned->entry;
  *entry = {};
  entry->srx = &ep->owner_srx;
  entry->addr = addr;
  entry->size = size;
  entry->tag = tag;
  entry->flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
  entry->owner_context = owned;
  return entry;
}

// Fills `entry` with the buffer of `recv` for a message of entry->size
// bytes. Whether `recv` is used up: an FI_MULTI_RECV buffer lends its
// unused window and is used up once less than the minimum remains.
bool Lend(StreamEp* ep, PostedRecv& recv, fi_peer_rx_entry* entry) {
  auto* owned = static_cast<PeerRxEntry*>(entry->owner_context);
  owned->queued = false;
  entry->context = recv.context;
  entry->flags = FI_RECV | (recv.tagged ? FI_TAGGED : FI_MSG);
  bool used_up = true;
  if (recv.flags & FI_MULTI_RECV) {
    size_t window = recv.capacity - recv.used;
    owned->iov = {{static_cast<char*>(recv.iov[0].iov_base) + recv.used,
                   window}};
    owned->desc = {recv.desc[0]};
    recv.used += std::min(entry->size, window);
    used_up = recv.capacity - recv.used < ep->util.min_multi_recv;
    if (used_up) entry->flags |= FI_MULTI_RECV;
  } else {
    // Used up: its vectors go with the entry (the entry's, kept for reuse,
    // go back with the receive to the spares) instead of being copied.
    owned->iov.swap(recv.iov);
    owned->desc.swap(recv.desc);
  }
  entry->iov = owned->iov.data();
  entry->desc = owned->desc.data();
  entry->count = owned->iov.size();
  // The completion is the peer's to write, without this reservation.
  if (used_up && recv.reserved) CqUnreserve(ep->util.rx_cq);
  return used_up;
}

// get_msg/get_tag: lends the first receive of `queue` that takes the
// message, else an unmatched entry and -FI_ENOENT.
template <typename Queue>
int Get(fid_peer_srx* srx, Queue& queue, fi_addr_t addr, size_t size,
        bool tagged, uint64_t tag, fi_peer_rx_entry** out) {
  StreamEp* ep = EpOf(srx);
  if (out == nullptr) return -FI_EINVAL;
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  fi_peer_rx_entry* entry = NewEntry(ep, addr, size, tag, tagged);
  *out = entry;
  auto it = FindRecv(queue, ep->directed_recv, addr, tagged, tag);
  if (it == queue.end()) return -FI_ENOENT;
  if (Lend(ep, **it, entry)) {
    ep->spare_recvs.Keep(std::move(*it));
    queue.erase(it);
  }
  return 0;
}

int GetMsg(fid_peer_srx* srx, fi_addr_t addr, size_t size,
           fi_peer_rx_entry** entry) {
  return Get(srx, EpOf(srx)->recvs, addr, size, false, 0, entry);
}

// fi_peer(3) passes no size to get_tag: the lent buffer's own size
// applies (entry->size is 0; a tagged receive is never FI_MULTI_RECV).
int GetTag(fid_peer_srx* srx, fi_addr_t addr, uint64_t tag,
           fi_peer_rx_entry** entry) {
  return Get(srx, EpOf(srx)->tagged_recvs, addr, 0, true, tag, entry);
}

// A sender the peer's AV did not hold when the peer asked may be there now
// (later inserts are found by ResolveQueuedSenders).
void FindSenderAgain(fi_peer_rx_entry* entry) {
  if (entry->addr == FI_ADDR_NOTAVAIL) {
    entry->addr = FindQueuedPeerSender(*entry);
  }
}

int QueueMsg(fi_peer_rx_entry* entry) {
  StreamEp* ep = EpOf(entry->srx);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  FindSenderAgain(entry);
  auto it = FindRecv(ep->recvs, ep->directed_recv, entry->addr, false, 0);
  if (it == ep->recvs.end()) {
    static_cast<PeerRxEntry*>(entry->owner_context)->queued = true;
    ep->queued_peer_msgs.push_back(entry);
    return 0;
  }
  if (Lend(ep, **it, entry)) {
    ep->spare_recvs.Keep(std::move(*it));
    ep->recvs.erase(it);
  }
  return entry->srx->peer_ops->start_msg(entry);
}

int QueueTag(fi_peer_rx_entry* entry) {
  StreamEp* ep = EpOf(entry->srx);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  FindSenderAgain(entry);
  auto it = FindRecv(ep->tagged_recvs, ep->directed_recv, entry->addr, true,
                     entry->tag);
  if (it == ep->tagged_recvs.end()) {
    UnexpectedMsg message;
    message.header.op = static_cast<uint8_t>(Op::kTagged);
    message.header.tag = entry->tag;
    message.header.size = entry->size;
    if (const UnexpectedMsg* held = QueuedPeerMessage(*entry)) {
      // What FI_PEEK reports: the message's remote CQ data too.
      message.header.flags = held->header.flags & kRemoteData;
      message.header.data = held->header.data;
    }
    message.source = entry->addr;
    message.peer_entry = entry;
    static_cast<PeerRxEntry*>(entry->owner_context)->queued = true;
    ep->unexpected.push_back(std::move(message));
    return 0;
  }
  Lend(ep, **it, entry);
  ep->spare_recvs.Keep(std::move(*it));
  ep->tagged_recvs.erase(it);
  return entry->srx->peer_ops->start_tag(entry);
}

// Takes a queued `entry` out of the endpoint's queues.
void Withdraw(StreamEp* ep, fi_peer_rx_entry* entry) {
  auto& msgs = ep->queued_peer_msgs;
  msgs.erase(std::remove(msgs.begin(), msgs.end(), entry), msgs.end());
  ep->unexpected.remove_if(
      [entry](const UnexpectedMsg& m) { return m.peer_entry == entry; });
  for (auto it = ep->claimed.begin(); it != ep->claimed.end();) {
    it = it->second.peer_entry == entry ? ep->claimed.erase(it) : ++it;
  }
}

void FreeEntry(fi_peer_rx_entry* entry) {
  StreamEp* ep = EpOf(entry->srx);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  auto* owned = static_cast<PeerRxEntry*>(entry->owner_context);
  if (owned == nullptr || &owned->entry != entry || !owned->lent) {
    return;  // not lent (freed twice?): nothing to free
  }
  if (owned->queued) Withdraw(ep, entry);
  owned->lent = false;
  if (ep->spare_peer_entries.size() < kMaxSparePeerEntries) {
    ep->spare_peer_entries.push_back(owned);
    return;
  }
  // Too many spares: the last entry takes this one's slot.
  size_t slot = owned->slot;
  std::swap(ep->peer_entries[slot], ep->peer_entries.back());
  ep->peer_entries[slot]->slot = slot;
  ep->peer_entries.pop_back();
}

fi_ops_srx_owner kOwnerOps = {
    .size = sizeof(fi_ops_srx_owner),
    .get_msg = GetMsg,
    .get_tag = GetTag,
    .queue_msg = QueueMsg,
    .queue_tag = QueueTag,
    .free_entry = FreeEntry,
};

}  // namespace

fid_peer_srx* StreamEpOwnerSrx(StreamEp* ep) {
  fid_peer_srx& srx = ep->owner_srx;
  if (srx.owner_ops == nullptr) {
    srx.ep_fid.fid.fclass = FI_CLASS_PEER_SRX;
    srx.ep_fid.fid.context = ep;
    srx.owner_ops = &kOwnerOps;
  }
  return &srx;
}

OwnersRecvFill FillOwnersRecv(fid_peer_srx* srx, fi_addr_t addr,
                              const Header& header, const char* payload,
                              const HmemCopier& copier) {
  OwnersRecvFill fill;
  if (srx->owner_ops != &kOwnerOps) return fill;
  StreamEp* ep = EpOf(srx);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  const bool tagged = header.op == static_cast<uint8_t>(Op::kTagged);
  auto& queue = tagged ? ep->tagged_recvs : ep->recvs;
  auto it = FindRecv(queue, ep->directed_recv, addr, tagged, header.tag);
  if (it == queue.end()) return fill;
  if (!(*it)->TakesWhole(header.size)) return fill;
  std::unique_ptr<PostedRecv> taken = std::move(*it);
  queue.erase(it);
  // As Lend: the completion is the peer's to write, without this room.
  if (taken->reserved) CqUnreserve(ep->util.rx_cq);
  taken->reserved = false;
  ssize_t copied = FillWhole(copier, taken->iov.data(), taken->iov.size(),
                             payload, header.size);
  if (copied < 0) {
    // As RecvOf makes a lent buffer the peer's receive: the peer reports
    // it, whatever the owner's receive chose (srx.h).
    taken->write_entry = true;
    fill.failed = std::move(taken);
    fill.error = static_cast<int>(copied);
    return fill;
  }
  fill.taken = true;
  fill.completion = RecvCompletion(*taken, header, header.size);
  ep->spare_recvs.Keep(std::move(taken));
  return fill;
}

void StartPeerEntry(StreamEp* ep, fi_peer_rx_entry* entry,
                    std::unique_ptr<PostedRecv> recv) {
  Lend(ep, *recv, entry);
  entry->srx->peer_ops->start_tag(entry);
}

void PostUntaggedRecv(StreamEp* ep, std::unique_ptr<PostedRecv> recv) {
  auto& queued = ep->queued_peer_msgs;
  if (queued.empty()) {  // the common case, without walking a deque
    ep->recvs.push_back(std::move(recv));
    return;
  }
  ResolveQueuedSenders(ep);
  for (auto it = queued.begin(); it != queued.end();) {
    fi_peer_rx_entry* entry = *it;
    if (ep->directed_recv && recv->source != FI_ADDR_UNSPEC &&
        recv->source != entry->addr) {
      ++it;
      continue;
    }
    it = queued.erase(it);
    bool used_up = Lend(ep, *recv, entry);
    entry->srx->peer_ops->start_msg(entry);
    if (used_up) return;
  }
  ep->recvs.push_back(std::move(recv));
}

}  // namespace stream
}  // namespace fabric

// File: fabric/providers/stream/srx.h
//
// Peer SRX (fi_peer(3), "PEER SRX") on the stream engine: a StreamEp
// (tcp's endpoints, shm's) as the owner of the receive queues a peer provider
// takes its receive buffers from.
//
// Our fi_ext.h keeps Debian 1.17's fi_ops_srx_peer, whose callbacks take
// the `struct fi_peer_rx_entry *` concerned (the man page shows
// `struct fid_peer_srx *`); the entry's srx names the SRX.
//
// Owner (StreamEpOwnerSrx), what each owner op does on the endpoint:
// - get_msg/get_tag: lend the first posted receive that takes a message
//   from `addr` (FI_DIRECTED_RECV endpoints filter on the receive's
//   source) with `tag` (ignore bits apply), in posting order; 0 with the
//   entry filled: iov/desc/count, context, addr, size, tag, and flags =
//   the completion flags the peer reports (FI_RECV | FI_MSG or FI_TAGGED).
//   The receive is no longer posted: fi_cancel of it returns -FI_ENOENT,
//   and its completion (and its FI_ETRUNC when the message is larger) is
//   the peer's to report, through its CQ (in use, a peer CQ of the
//   owner's). No match: -FI_ENOENT with an entry holding addr, size, tag.
//   An FI_MULTI_RECV buffer lends its unused window (one iov) and stays
//   posted, `size` bytes of it spoken for; once less than
//   FI_OPT_MIN_MULTI_RECV bytes remain it is released and the entry's
//   flags carry FI_MULTI_RECV, for the peer's completion to tell the
//   application the buffer is done.
// - queue_msg/queue_tag: the peer keeps the message (entry->peer_context
//   is its own); it waits, in arrival order, until a receive takes it.
//   Queued tagged messages share one ordered list with the endpoint's own
//   unexpected tagged messages, so a receive takes whichever came first.
//   Queued untagged messages are taken before untagged messages still held
//   back in the endpoint's sockets (those are not buffered). When a match
//   was posted between get and queue, queue_* starts the entry at once.
// - When the application posts a receive that takes a queued message
//   (fi_recv, fi_trecv and their v/msg forms; also FI_CLAIM of a message
//   claimed with FI_PEEK | FI_CLAIM), the owner fills the entry as get_*
//   does and calls peer_ops->start_msg/start_tag with the endpoint's lock
//   held: the peer must not call the owner back from inside start_*.
//   FI_PEEK reports a queued tagged message (len = its size, tag; its
//   remote CQ data when the peer is one of ours, which keeps the message's
//   header in peer_context: fi_peer_rx_entry of 1.17 has no field for it);
//   FI_PEEK | FI_DISCARD and FI_CLAIM | FI_DISCARD drop it through
//   peer_ops->discard_tag, without a completion.
// - free_entry: returns the entry; one still queued is withdrawn from the
//   owner's queues. Entries still lent are freed with the endpoint, which
//   must therefore close after its peers.
// Not passed to the peer: the receive's FI_COMPLETION choice (selective
// completion) and the owner's receive counter; the peer reports and counts
// with its own CQ and counters. The owner ops take the endpoint's lock, so
// a peer calling them from another thread needs an endpoint that locks
// (not FI_THREAD_DOMAIN's lockless one).
//
// Peer (fi_srx_context with FI_PEER on tcp's and shm's domains, see
// util/peer_srx.h; the endpoint bound to it): every untagged and tagged
// message that arrives asks the owner for its buffer (get_msg with the
// message's size, get_tag), with the sender's fi_addr_t in the endpoint's
// AV (FI_ADDR_NOTAVAIL when it holds none).
// - 0: the payload lands in entry->iov (system memory; entry->desc is not
//   read), the completion (context, entry->flags, length, tag, CQ data,
//   source; FI_ETRUNC when larger than the buffer) goes to the endpoint's
//   CQ, in use a peer CQ of the owner's, then free_entry.
// - -FI_ENOENT: the message is read into a buffer of the endpoint's, the
//   stream goes on, entry->size is set to the message's size and
//   entry->peer_context to the held message, and the entry is queued
//   (queue_msg/queue_tag). start_msg/start_tag and discard_msg/discard_tag
//   only record the entry (the owner calls them holding its own lock, and
//   finishing means writing the owner's CQ and calling free_entry); the
//   endpoint's next progress pass copies the bytes into the entry's buffer
//   and completes it as above, or, discarded, drops them without a
//   completion. That pass comes with the owner's next read of the peer's
//   CQ (fi_cq_read(cq, NULL, 0) on a peer CQ); the auto-progress thread
//   is not woken for it and finishes it at its next wake-up. Either way the
//   sender gets its answer as for a delivered message (FI_DELIVERY_COMPLETE),
//   and free_entry follows.
// - any other error: the message is dropped and logged, and a sender that
//   asked for an answer gets -FI_ENORX.
// Messages held for the owner are not limited in number or bytes. Closing
// the endpoint returns their entries (free_entry) to the owner, which must
// still be open. Receives posted on the endpoint itself are never matched
// while it is bound to a peer SRX.
#ifndef FABRIC_PROVIDERS_STREAM_SRX_H_
#define FABRIC_PROVIDERS_STREAM_SRX_H_

#include <rdma/fi_ext.h>

#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {

// The fid_peer_srx (FI_CLASS_PEER_SRX, owner_ops set, peer_ops for the peer
// to fill) through which a peer provider takes `ep`'s receives.
fid_peer_srx* StreamEpOwnerSrx(StreamEp* ep);

// The peer callbacks of the data path: what fi_srx_context with FI_PEER
// sets into the owner's srx->peer_ops.
extern fi_ops_srx_peer kPeerSrxOps;

// fi_ep_bind(ep, srx, flags) of a PeerSrx: flags 0, same domain, one SRX,
// before fi_enable. 0 or -fi_errno (logged).
int BindPeerSrx(StreamEp* ep, PeerSrx* srx, uint64_t flags);

// Link::OnHeader of a kMsg/kTagged on a peer SRX's endpoint: where the
// payload goes (the owner's buffer, or one of the endpoint's).
RxTarget PeerSrxHeader(Link* link, const Header& header);
// ... and once it is in: completes it, or queues it at the owner.
void PeerSrxMessageDone(Link* link, const Header& header, size_t placed);
// Link::TakeWholeMessage on a peer SRX's endpoint: true when the owner's
// buffer took the message `header` at `payload` whole (complete); false
// for the general way, with what the owner answered kept for the
// PeerSrxHeader that follows (Link::owner_answer).
bool PeerSrxTakeWhole(Link* link, const Header& header, const char* payload);
// What FillOwnersRecv did.
struct OwnersRecvFill {
  // The owner's receive took the message: `completion` is what the peer
  // reports for it.
  bool taken = false;
  fi_cq_tagged_entry completion = {};
  // The copy into it failed (error, a negative fi_errno): the receive,
  // for the peer's link to fail as it fails its own.
  std::unique_ptr<PostedRecv> failed;
  int error = 0;
};
// For a peer of ours (PeerSrxTakeWhole), what get_msg/get_tag and the
// peer's copy do for a message that arrived whole, without an entry: the
// owner's posted receive that get_* would lend to the message `header`
// from `addr`, when it is in host memory, not FI_MULTI_RECV and large
// enough, is taken out of its queue (its room in the owner's CQ given
// back), filled from `payload` with `copier` and kept for reuse. Nothing
// changes when `srx` is another provider's or no receive takes the
// message so.
OwnersRecvFill FillOwnersRecv(fid_peer_srx* srx, fi_addr_t addr,
                              const Header& header, const char* payload,
                              const HmemCopier& copier);
// The message a peer of ours queued with `entry` (it keeps the message in
// entry->peer_context: its header, and its sender's address while its AV
// does not hold it), or null when the peer is another provider's.
const UnexpectedMsg* QueuedPeerMessage(const fi_peer_rx_entry& entry);
// The sender of the message a peer of ours queued with `entry`, looked up
// again in that peer endpoint's AV; FI_ADDR_NOTAVAIL while it holds none,
// and for another provider's peers.
fi_addr_t FindQueuedPeerSender(const fi_peer_rx_entry& entry);
// Gives `entry` back to the owner of the endpoint's SRX (free_entry).
void ReturnPeerEntry(StreamEp* ep, fi_peer_rx_entry* entry);
// Finishes the held messages the owner started or discarded; in the
// endpoint's progress, under its lock.
void FinishStartedPeerMsgs(StreamEp* ep);
// Returns every held message's entry and unbinds the SRX (the endpoint
// closes).
void ReleasePeerSrx(StreamEp* ep);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_SRX_H_

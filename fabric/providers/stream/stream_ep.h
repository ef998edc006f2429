// File: fabric/providers/stream/stream_ep.h
//
// The message engine of stream endpoints: tcp's MSG and RDM endpoints,
// shm's and rxm's RDM endpoints run on it, each over its own byte streams
// (byte_stream.h). A StreamEp
// holds what belongs to the endpoint (posted receives, unexpected tagged
// messages, transmit accounting); a Link is one connection with what it
// is in the middle of receiving and the requests awaiting its peer's
// answers. An MSG endpoint has one link; an RDM endpoint one per peer. The
// concrete endpoint decides which link a transmit takes and what a broken
// link means (StreamEpOwner).
//
// Receive-side resource management: with FI_RM_ENABLED a message that
// finds no posted receive stays in the socket (the sender's data waits in
// TCP's buffers) until one is posted: "retried" in the words of
// fi_domain(3). Untagged messages are never buffered; unexpected tagged
// ones are, up to kMaxUnexpectedBytes, and then wait in the socket too.
// With FI_RM_DISABLED such a message is dropped and the sender's transmit
// fails with FI_ENORX.
//
// A message whose completion nobody reserved room for (remote CQ data of a
// write or atomic, a message into an FI_MULTI_RECV buffer) waits in the
// stream likewise while the receive CQ is full (CqFull), with either
// resource-management mode; the endpoint's next progress pass after the
// application made room lets it go (ResumeAfterCqRoom). Nothing is dropped.
#ifndef FABRIC_PROVIDERS_STREAM_STREAM_EP_H_
#define FABRIC_PROVIDERS_STREAM_STREAM_EP_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>

#include <atomic>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fabric/providers/stream/connection.h"
#include "fabric/providers/util/app_buffer.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/peer_srx.h"
#include "fabric/providers/util/progress.h"
#include "fabric/providers/util/ring_queue.h"

namespace fabric {
namespace stream {

class Link;
struct StreamEp;
struct SharedTx;

// A posted receive.
struct PostedRecv {
  void* context = nullptr;
  uint64_t flags = 0;  // the operation's flags
  std::vector<iovec> iov;
  std::vector<void*> desc;  // one per iov entry (null when not given)
  size_t capacity = 0;
  fi_hmem_iface iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
  bool tagged = false;
  uint64_t tag = 0;
  uint64_t ignore = 0;
  fi_addr_t source = FI_ADDR_UNSPEC;  // FI_DIRECTED_RECV: only this peer
  bool write_entry = false;
  bool reserved = false;
  size_t used = 0;  // FI_MULTI_RECV: bytes already filled
  // Added to its completion's flags: FI_MULTI_RECV when it is the last
  // window of an owner's buffer (a peer SRX entry's flags).
  uint64_t completion_flags = 0;

  // As new, with the iov and desc storage kept (SparePool).
  void Reset();

  // Whether a message of `size` bytes that has arrived whole fills this
  // receive as it is: host memory, not FI_MULTI_RECV, room for all of it.
  bool TakesWhole(uint64_t size) const {
    return (flags & FI_MULTI_RECV) == 0 && iface == FI_HMEM_SYSTEM &&
           capacity >= size;
  }
};

// Copies the `size` bytes of a message that arrived whole, at `payload`,
// into the host memory of iov[0..count) with `copier`: the bytes copied,
// or a negative fi_errno.
inline ssize_t FillWhole(const HmemCopier& copier, const iovec* iov,
                         size_t count, const char* payload, size_t size) {
  if (size == 0) return 0;
  return copier.CopyToIov(FI_HMEM_SYSTEM, 0, iov, count, 0, payload, size);
}

// Finished objects an endpoint keeps for its next messages, so that a
// message costs no allocation. T::Reset() makes an object as new while
// keeping its vectors' storage.
template <typename T>
class SparePool {
 public:
  // A spare object made new, or a new one.
  std::unique_ptr<T> Take() {
    if (spares_.empty()) return std::make_unique<T>();
    std::unique_ptr<T> object = std::move(spares_.back());
    spares_.pop_back();
    object->Reset();
    return object;
  }
  // Keeps `object` (null: nothing) while fewer than kMax are kept.
  void Keep(std::unique_ptr<T> object) {
    if (object != nullptr && spares_.size() < kMax) {
      spares_.push_back(std::move(object));
    }
  }

 private:
  static constexpr size_t kMax = 32;
  std::vector<std::unique_ptr<T>> spares_;
};

// A tagged message that arrived before its receive.
struct UnexpectedMsg {
  Header header = {};
  std::vector<char> data;
  Link* link = nullptr;  // to answer on; null once the link is gone
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  // While source is FI_ADDR_NOTAVAIL: the sender's address (its link's
  // peer_name), by which a later fi_av_insert of it is found.
  std::vector<char> sender_name;
  // A message a peer provider holds and queued on the endpoint's
  // fid_peer_srx (queue_tag): header carries its tag and size, data is
  // empty, and a receive that takes it is handed to the peer (start_tag).
  fi_peer_rx_entry* peer_entry = nullptr;
};

// An fi_peer_rx_entry the endpoint lent a peer provider (get_msg/get_tag),
// with the storage its iov and desc point to (srx_owner.cc).
struct PeerRxEntry {
  fi_peer_rx_entry entry = {};
  std::vector<iovec> iov;
  std::vector<void*> desc;
  bool lent = false;    // between get_msg/get_tag and free_entry
  bool queued = false;  // waits in the endpoint's queues (queue_msg/tag)
  size_t slot = 0;      // its index in StreamEp::peer_entries
};

// A message that found no receive at the owner of the endpoint's peer SRX,
// held until the owner starts or discards its entry (srx_peer.cc).
struct PeerHeldMsg {
  UnexpectedMsg message;
  fi_peer_rx_entry* entry = nullptr;
  bool tagged = false;
  StreamEp* ep = nullptr;
  std::list<PeerHeldMsg>::iterator self;
};

// What the concrete endpoint decides for the shared data path, which calls
// these with the endpoint's lock (util.mutex) held.
class StreamEpOwner {
 public:
  virtual ~StreamEpOwner() = default;
  // The link a transmit to `dest` goes on, or null with *error set to a
  // negative fi_errno.
  virtual Link* LinkFor(fi_addr_t dest, int* error) = 0;
  // `link` broke with -fi_errno `error` (0: the peer closed it); its own
  // transmits have failed already.
  virtual void LinkClosed(Link* link, int error) = 0;
  virtual void LinkBacklog(Link* link, bool backlogged) = 0;
  // A receive was posted, or the receive CQ has room again: a message held
  // for want of either may go now.
  virtual void ReceivePosted() = 0;
};

// Destinations whose transmits another endpoint carries (divert.h): tcp's
// local path sends to peers on this host through shm.
class TransmitDivert {
 public:
  virtual ~TransmitDivert() = default;
  // The endpoint a transmit to `dest` goes through, or null: this one.
  virtual fid_ep* Via(fi_addr_t dest) = 0;
  // The endpoint Via named could not reach `dest` (nothing was sent): it
  // is sent by this endpoint, now and from now on.
  virtual void Refused(fi_addr_t dest) = 0;
};

struct StreamEp {
  UtilEndpoint util;  // first: the application's fid_ep* is &util.ep_fid
  StreamEpOwner* owner = nullptr;
  // Set while another endpoint carries some transmits (divert.h).
  TransmitDivert* divert = nullptr;
  bool directed_recv = false;  // FI_DIRECTED_RECV in the endpoint's caps
  bool source_err = false;     // FI_SOURCE_ERR in the endpoint's caps

  // Receives, in posting order. Untagged ones are taken from the front
  // almost always: a RingQueue makes that O(1) without a deque's block
  // bookkeeping (a 64 B shm ping-pong spent 3% of its instructions there).
  // Tagged ones mostly too (an MPI library's matching): a list cost a
  // malloc and a free per receive (perf of Open MPI's 8 B ping-pong).
  RingQueue<std::unique_ptr<PostedRecv>> recvs;
  RingQueue<std::unique_ptr<PostedRecv>> tagged_recvs;
  std::list<UnexpectedMsg> unexpected;
  size_t unexpected_bytes = 0;
  // AvInsertsSoFar() when the senders of queued messages were last looked
  // up (ResolveQueuedSenders).
  uint64_t av_inserts_seen = 0;
  // Messages claimed with FI_PEEK | FI_CLAIM, by the peek's context.
  std::unordered_map<void*, UnexpectedMsg> claimed;

  // As the owner of a peer SRX (srx.h): what peer providers import,
  // the entries lent to them until free_entry, and their queued untagged
  // messages in arrival order (queued tagged ones are in `unexpected`).
  fid_peer_srx owner_srx = {};
  // Every entry, lent or spare; the spare ones (freed, kept for the next
  // messages: a message then costs no allocation) also in
  // spare_peer_entries.
  std::vector<std::unique_ptr<PeerRxEntry>> peer_entries;
  std::vector<PeerRxEntry*> spare_peer_entries;
  std::deque<fi_peer_rx_entry*> queued_peer_msgs;

  // As a peer (srx.h): the SRX it is bound to, its messages queued at
  // the owner, and those the owner started or discarded (start_*,
  // discard_*, under `started_mutex`: the owner's threads call them), for
  // the endpoint's progress to finish.
  PeerSrx* peer_srx = nullptr;
  std::list<PeerHeldMsg> peer_held;
  std::mutex started_mutex;
  std::vector<std::pair<PeerHeldMsg*, bool>> started;  // true: discarded
  // `started` is not empty: what each progress pass checks instead of
  // taking the mutex.
  std::atomic<bool> any_started{false};

  size_t tx_outstanding = 0;  // posted, not yet completed
  // The shared transmit context it is bound to (shared_context.h),
  // whose queue its transmits count in instead of its own.
  SharedTx* shared_tx = nullptr;
  // Links whose message waits for a receive: a posted receive asks them
  // again only when there are some (not walking every link of an RDM
  // endpoint with many peers).
  size_t stalled_links = 0;
  // A link stalled because the receive CQ was full (WaitForRxCqRoom).
  bool awaiting_cq_room = false;
  // The progress source whose passes advance its links: asked back by the
  // engine (RunAgain) while a message waits for CQ room, which no input
  // announces. Null for endpoints whose sources run on every pass.
  ProgressSource* data_source = nullptr;
  uint64_t next_id = 1;
  // Finished transmit entries and receives, for the next ones.
  SparePool<TxEntry> spare_tx;
  SparePool<PostedRecv> spare_recvs;

  const fi_provider* log() const {
    return util.domain->fabric->provider->c_provider();
  }
};
FABRIC_BEGINS_WITH(StreamEp, util);

inline StreamEp* ToStreamEp(fid_ep* ep) { return FidCast<StreamEp>(ep); }

class Link : public ConnectionHandler {
 public:
  // `peer` is what FI_SOURCE reports for the stream's other end.
  Link(StreamEp* ep, std::unique_ptr<ByteStream> stream, fi_addr_t peer);
  ~Link() override;

  StreamEp* const ep;
  // FI_ADDR_NOTAVAIL while the AV does not hold the peer's address
  // (peer_name); looked up again at each message until it does
  // (FindPeerAgain).
  fi_addr_t peer;
  Connection connection;
  // The peer's address in the endpoint's format, when known: what
  // FI_SOURCE_ERR reports for a peer the AV does not hold.
  std::vector<char> peer_name;

  // Fails this link's transmits not yet complete, and the receive it is
  // filling, with `err`.
  void FailOutstanding(int err);
  // A peer the AV did not hold when it connected: sets `peer` when the AV
  // holds its address now.
  void FindPeerAgain();
  // Takes back the CQ room of this link's outstanding operations (the
  // endpoint closes without reporting them).
  void Unreserve();

  // ConnectionHandler.
  RxTarget OnHeader(const Header& header,
                    const RmaDescriptor* descriptors) override;
  void OnMessageDone(const Header& header, size_t placed) override;
  bool TakeWholeMessage(const Header& header, const char* payload,
                        CqReadBuffer* direct) override;
  void OnSent(std::unique_ptr<TxEntry> entry) override;
  void OnClosed(int error) override;
  void OnBacklog(bool backlogged) override;
  void OnStalled(bool stalled) override;

  // What the payload now arriving goes to.
  std::unique_ptr<PostedRecv> current_recv;
  std::optional<UnexpectedMsg> current_unexpected;
  std::unique_ptr<TxEntry> current_read;  // a read's answer
  std::vector<iovec> rma_target;          // a remote access's memory
  std::vector<UtilCntr*> rma_cntrs;       // and its regions' counters
  fi_hmem_iface rma_iface = FI_HMEM_SYSTEM;  // of rma_target (atomics)
  uint64_t rma_device = 0;
  std::vector<char> atomic_operands;      // an atomic's operands, compares
  iovec rx_window = {};                   // FI_MULTI_RECV: the unused part
  // The owner's entry for the message arriving, on a peer SRX's endpoint.
  fi_peer_rx_entry* peer_entry = nullptr;
  int rma_status = 0;
  bool refused = false;  // the arriving message found no receive (no RM)
  // TakeWholeMessage found no posted receive for the message whose
  // OnHeader comes next: that one need not look again.
  bool no_recv_matches = false;
  // On a peer SRX's endpoint: what the owner answered TakeWholeMessage
  // (get_msg/get_tag's entry and return) for the message whose OnHeader
  // comes next, which takes it instead of asking again.
  struct OwnerAnswer {
    fi_peer_rx_entry* entry = nullptr;
    int rc = 0;
    bool given = false;
  };
  OwnerAnswer owner_answer;

  // Requests awaiting the peer's answers, and what FI_FENCE holds back.
  size_t answers_pending = 0;
  std::unordered_map<uint64_t, std::unique_ptr<TxEntry>> awaiting;
  std::deque<std::unique_ptr<TxEntry>> fenced;
};

// The links of a connectionless endpoint (tcp's and shm's RDM): one or two
// per peer, and which one transmits to each AV address take.
struct RdmLinks {
  std::vector<std::unique_ptr<Link>> all;
  std::unordered_map<fi_addr_t, Link*> to;
  std::vector<std::unique_ptr<Link>> closed;  // freed by FreeClosed

  Link* Add(std::unique_ptr<Link> link);
  // `link` closed (inside its own callback): no transmit takes it any
  // more, and it is freed at the next FreeClosed.
  void Retire(Link* link);
  void FreeClosed() { closed.clear(); }
  // Takes back the CQ room of every link's operations and frees the links
  // (the endpoint closes).
  void Clear();
  // Advances the links whose message waits for a receive (one was posted).
  void ProgressStalled();
};

// fi_ep_bind of the endpoints on this data path.
int BindStreamEp(fid* object, fid* bound, uint64_t flags);
// Sets the data path's ops tables on `ep` (with `cm` as its fi_ops_cm) and
// the capabilities they read from `info`.
void InstallDataPathOps(StreamEp* ep, const fi_info& info, fi_ops_cm* cm);

// A transmit's place in the endpoint's transmit queue (tx_attr->size), or
// its shared transmit context's: TakeTxSlot takes one (false when full),
// CountTxSlot takes one whatever the limit (a transmit already written in
// part), GiveTxSlot gives one back (shared_context.cc).
// (Out of line only with a shared context: the common case stays inline.)
bool TakeSharedTxSlot(StreamEp* ep);
void CountSharedTxSlot(StreamEp* ep, int delta);
inline bool TakeTxSlot(StreamEp* ep) {
  if (ep->shared_tx != nullptr) return TakeSharedTxSlot(ep);
  if (ep->tx_outstanding >= ep->util.info->tx_attr->size) return false;
  ++ep->tx_outstanding;
  return true;
}
inline void CountTxSlot(StreamEp* ep) {
  if (ep->shared_tx != nullptr) CountSharedTxSlot(ep, 1);
  ++ep->tx_outstanding;
}
inline void GiveTxSlot(StreamEp* ep) {
  if (ep->shared_tx != nullptr) CountSharedTxSlot(ep, -1);
  --ep->tx_outstanding;
}

// Keeps a finished entry in ep->spare_tx unless it holds a large copy.
void RecycleTxEntry(StreamEp* ep, std::unique_ptr<TxEntry> entry);

// Posts a transmit the endpoint built on `link`: limits, CQ reservation,
// FI_FENCE. 0 or -fi_errno (nothing posted).
ssize_t PostTx(Link* link, std::unique_ptr<TxEntry> entry);
// Leaves a large payload of application memory in place (kPayloadInSender,
// wire.h) when the peer can copy it from here: a message's, an RMA
// write's (its descriptors then follow the target's), or a read's data
// (where the stream keeps nothing meanwhile: no answer comes). PostTx
// calls it; the target of a read too.
void LeavePayloadInPlace(Link* link, TxEntry* entry);
// A small message or tagged send of host memory (the caller checked it
// has no FI_FENCE and waits for no answer) goes from the application's
// buffer straight to the link's stream when nothing is queued ahead of it:
// no transmit entry, no copy, completed at once; what the stream does not
// take is queued with a copy. kSendLater when it must be built and posted
// (PostTx) instead; else 0 or -fi_errno. `header` lacks only its id.
constexpr ssize_t kSendLater = 1;
ssize_t SendNow(StreamEp* ep, fi_addr_t dest, Header header,
                const AppBuffer& payload, const fi_cq_tagged_entry& completion,
                bool write_entry);
// Moves the transmits of `from`, a link whose connection is held (nothing
// written yet), onto `to` in order; they keep their completions.
void MoveQueuedTx(Link* from, Link* to);
// Whether a message that adds an unreserved entry to the receive CQ must
// wait for room: true (and the endpoint remembers it) while the CQ is full.
// Has the engine come back to the endpoint's links next pass (RunAgain):
// room in the CQ announces itself on no fd.
inline void AskForNextPass(StreamEp* ep) {
  if (ep->data_source != nullptr) {
    ep->util.domain->progress->RunAgain(ep->data_source);
  }
}
inline bool WaitForRxCqRoom(StreamEp* ep) {
  if (ep->util.rx_cq == nullptr || !CqFull(ep->util.rx_cq)) return false;
  if (!ep->awaiting_cq_room) AskForNextPass(ep);
  ep->awaiting_cq_room = true;
  return true;
}
// Called at the start of every progress pass of an endpoint on this data
// path, under its lock: lets the messages held by WaitForRxCqRoom go once
// the application has made room (ResumeHeldForCqRoom, link.cc).
void ResumeHeldForCqRoom(StreamEp* ep);
inline void ResumeAfterCqRoom(StreamEp* ep) {
  if (ep->awaiting_cq_room) ResumeHeldForCqRoom(ep);
}
// Logs `what` as the reason a call fails; -fi_errno.
ssize_t FailOp(const StreamEp& ep, int fi_errno, const char* what);
// A transmit call's flags and the endpoint's state: 0 or -fi_errno.
ssize_t CheckTransmit(const StreamEp& ep, uint64_t flags);
// Posts `entry` (built by a transmit call with `flags`) on the link to
// `dest`, with the completion entry the flags ask for (none for fi_inject
// & co.).
ssize_t SendTx(StreamEp* ep, fi_addr_t dest, std::unique_ptr<TxEntry> entry,
               uint64_t flags, bool inject_call);
// Whether `recv` takes a message with `tag` (tagged receives only).
inline bool TagMatches(const PostedRecv& recv, uint64_t tag) {
  return ((recv.tag ^ tag) & ~recv.ignore) == 0;
}
// The first posted receive (of `queue`) that takes a message from `source`
// with `tag` (tagged receives only), or end.
template <typename Queue>
typename Queue::iterator FindRecv(Queue& queue, bool directed, fi_addr_t source,
                                  bool tagged, uint64_t tag) {
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    const PostedRecv& recv = **it;
    if (directed && recv.source != FI_ADDR_UNSPEC && recv.source != source) {
      continue;
    }
    if (!tagged || TagMatches(recv, tag)) return it;
  }
  return queue.end();
}
// Takes a tagged receive: completes it from a buffered unexpected message
// when one matches, else queues it.
void PostTaggedRecv(StreamEp* ep, std::unique_ptr<PostedRecv> recv);
// Takes an untagged receive: hands it to the peer messages queued on the
// endpoint's SRX while one matches (srx_owner.cc), else queues it.
void PostUntaggedRecv(StreamEp* ep, std::unique_ptr<PostedRecv> recv);
// Hands the tagged `recv` to the peer provider that queued `entry`: fills
// the entry and calls the peer's start_tag (srx_owner.cc).
void StartPeerEntry(StreamEp* ep, fi_peer_rx_entry* entry,
                    std::unique_ptr<PostedRecv> recv);
// The fi_addr_t in `ep`'s AV of the sender whose address (in the
// endpoint's address format) is `name`; FI_ADDR_NOTAVAIL while the AV does
// not hold it, or when `name` is empty.
fi_addr_t FindSender(const StreamEp& ep, const std::vector<char>& name);
// Messages that wait for a receive and arrived from a sender the AV did not
// hold then take its fi_addr_t once the AV holds it, so that a receive
// directed at it takes them and FI_PEEK and FI_SOURCE report it (a peer
// inserts its senders lazily, as Open MPI does). A message a peer of ours
// holds is looked up in that endpoint's AV (a shared receive context has
// none of its own). Looks up only when an AV gained entries since the last
// call (a named AV: always, it learns other processes' inserts only when
// it looks).
void ResolveQueuedSenders(StreamEp* ep);
// The first buffered unexpected message `recv` takes, or end().
std::list<UnexpectedMsg>::iterator FindUnexpected(StreamEp* ep,
                                                  const PostedRecv& recv);
// Removes a buffered unexpected message from the endpoint.
UnexpectedMsg TakeUnexpected(StreamEp* ep,
                             std::list<UnexpectedMsg>::iterator it);
// The completion of a receive (with `context`, tagged or not, `flags`
// added, its buffer at `buf`) by the message `header`, of which `placed`
// bytes landed. Inline: every received message builds one.
inline fi_cq_tagged_entry RecvCompletion(void* context, bool tagged,
                                         uint64_t flags, void* buf,
                                         const Header& header, size_t placed) {
  fi_cq_tagged_entry entry = {};
  entry.op_context = context;
  entry.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) | flags;
  if (header.flags & kRemoteData) {
    entry.flags |= FI_REMOTE_CQ_DATA;
    entry.data = header.data;
  }
  entry.len = placed;
  entry.tag = header.tag;
  entry.buf = buf;
  return entry;
}
// The completion of `recv` by the message `header`, of which `placed`
// bytes landed in its buffer.
inline fi_cq_tagged_entry RecvCompletion(const PostedRecv& recv,
                                         const Header& header, size_t placed) {
  void* buf = (recv.flags & FI_MULTI_RECV) != 0
                  ? static_cast<char*>(recv.iov[0].iov_base) + recv.used
              : recv.iov.empty() ? nullptr
                                 : recv.iov[0].iov_base;
  return RecvCompletion(recv.context, recv.tagged, recv.completion_flags, buf,
                        header, placed);
}
// Completes a receive with the message `header` from `source` (answered on
// `link` when it asks; null when that link is gone), of which `placed`
// bytes landed in its buffer.
void CompleteRecv(StreamEp* ep, Link* link, fi_addr_t source,
                  std::unique_ptr<PostedRecv> recv, const Header& header,
                  size_t placed);
// Completes `recv` with `message`'s data (answering its sender), or hands
// it to the peer provider holding the message.
void DeliverUnexpected(StreamEp* ep, UnexpectedMsg message,
                       std::unique_ptr<PostedRecv> recv);
// Drops a message with FI_DISCARD: answers its sender, or tells the peer
// provider holding it (discard_tag).
void DiscardUnexpected(const UnexpectedMsg& message);
// A tagged receive with FI_PEEK and/or FI_CLAIM (fi_tagged(3)): a peek
// reports the first buffered message it matches (FI_ENOMSG error when
// none) and, with FI_CLAIM, sets it aside for the paired FI_CLAIM receive
// with the same context, or with FI_DISCARD drops it; a claim takes the
// message set aside (or, with FI_DISCARD, drops it without a completion).
ssize_t PeekOrClaim(StreamEp* ep, std::unique_ptr<PostedRecv> recv);
// Reports a finished transmit operation (error: positive fi_errno, or 0).
void CompleteTx(StreamEp* ep, std::unique_ptr<TxEntry> entry, int error);
// Fails every posted receive with `err`.
void FailReceives(StreamEp* ep, int err);
// Takes back the CQ room of the posted receives (the endpoint closes).
void UnreserveReceives(StreamEp* ep);

// Sends the answer `op` (kAck, kReadResponse without data) to request `id`.
void SendAnswer(Link* link, Op op, uint64_t id, int32_t status);
// The local memory the descriptors of a remote access name, checked for
// `access`, into link->rma_target and *target (iov, iface, device); 0 or
// -FI_EACCES.
int ResolveRma(Link* link, const Header& header,
               const RmaDescriptor* descriptors, uint64_t access,
               RxTarget* target);
// Counts a remote access done to the target's memory (FI_REMOTE_WRITE, and
// FI_REMOTE_READ when `read`), and reports its remote CQ data with `kind`
// (FI_RMA or FI_ATOMIC).
void RemoteAccessDone(Link* link, const Header& header, uint64_t kind,
                      bool read);
// The target of a kAtomic (atomic_target.cc): where its operands go,
// and, once they are in, applying it and answering.
RxTarget AtomicHeader(Link* link, const Header& header,
                      const RmaDescriptor* descriptors);
void AtomicDone(Link* link, const Header& header);

// fi_ops tables of stream endpoints (stream_ops.cc, atomic.cc).
extern fi_ops_ep kStreamEpOps;
extern fi_ops_msg kStreamMsgOps;
extern fi_ops_tagged kStreamTaggedOps;
extern fi_ops_rma kStreamRmaOps;
extern fi_ops_atomic kStreamAtomicOps;

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_STREAM_EP_H_

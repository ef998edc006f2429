// File: fabric/providers/rxm/msg_stream.h
//
// A byte stream (stream::ByteStream) over an FI_EP_MSG endpoint of any
// provider, through the public API: what the stream engine needs to run an
// RDM endpoint over a provider's connected endpoints (rxm_ep.h). Bytes
// written are copied into registered send buffers and sent as messages of
// at most kBufferSize bytes; messages arrive in receive buffers posted in
// advance and are read out in order (an MSG endpoint delivers its messages
// reliably and in order). A buffer read to its end is posted again.
//
// Completions arrive on a CQ the stream's owner reads for all its streams
// (FI_CQ_FORMAT_MSG or larger: receives report their length); each
// entry's op_context is a StreamBuffer, which the owner hands back with
// DispatchCompletion and DispatchError. Closing a stream closes its endpoint,
// but entries of its buffers may still wait in that CQ: the buffers outlive the
// stream in StreamBuffers::Retire until the owner has read the CQ dry
// (RetiredBuffers).
//
// Backpressure: Write takes what free send buffers hold and returns
// -EAGAIN when none is free (their sends complete once the peer's
// provider took them); a receiver that does not read leaves its buffers
// full and the peer's provider holds further messages back. Writes of at
// most the endpoint's inject_size go by fi_inject (no completion, the
// buffer free at once). Writes stop at kTxBuffers unconfirmed messages
// (sends not completed, and injects no completed send covers), the last
// of them a send: no more are in flight than the peer posts receives for.
//
// Rendezvous (with RmaReads: endpoints whose device does RMA reads both
// ways): a large payload stays in the sender's memory (wire.h,
// kPayloadInSender), registered for remote reads while the peer may read
// it (Expose); the receiver reads it with fi_read straight into the
// application's buffer (StartPull): the connection waits for the reads
// (their completions come through the owner's CQ) while the owner goes on
// with its other work. One copy by the device instead of two through
// bounce buffers.
#ifndef FABRIC_PROVIDERS_RXM_MSG_STREAM_H_
#define FABRIC_PROVIDERS_RXM_MSG_STREAM_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <sys/uio.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/providers/stream/byte_stream.h"

namespace fabric {

class CqDirectProducer;

namespace rxm {

inline constexpr size_t kBufferSize = 16384;
inline constexpr size_t kRxBuffers = 16;
inline constexpr size_t kTxBuffers = 16;
// At most kTxBuffers messages are unconfirmed (Write): each has a receive.
static_assert(kTxBuffers <= kRxBuffers);

class MsgStream;
class RmaPull;
struct StreamBuffers;

// One bounce buffer, or one RMA read of a Pull; its address is the
// op_context of its operation.
struct StreamBuffer {
  enum Kind { kSend, kReceive, kRead };
  fi_context2 context;  // first: for providers with FI_CONTEXT(2) modes
  StreamBuffers* owner = nullptr;
  char* data = nullptr;
  Kind kind = kSend;
  size_t length = 0;  // a received buffer: the bytes that arrived
  size_t offset = 0;  // and those read
  // A send: how many injects its stream had posted before it (its
  // completion says they arrived: an MSG endpoint completes in order).
  uint64_t injects_before = 0;
};

// A stream's buffers and their registration. `stream` is null once the
// stream is closed: completions still found for them are dropped.
struct StreamBuffers {
  ~StreamBuffers();
  MsgStream* stream = nullptr;
  std::vector<StreamBuffer> buffers;  // kRxBuffers receives, then sends
  std::vector<StreamBuffer> reads;    // of the pull under way
  std::unique_ptr<char[]> memory;
  fid_mr* mr = nullptr;
  void* desc = nullptr;
};

// Where closed streams leave their buffers until the owner's CQ is dry.
using RetiredBuffers = std::vector<std::unique_ptr<StreamBuffers>>;

// What a stream needs to move large payloads by RMA read (rendezvous).
struct RmaReads {
  fid_cq* cq = nullptr;    // the owner's (null: no rendezvous)
  bool virt_addr = true;   // FI_MR_VIRT_ADDR: remote addresses are virtual
};

class MsgStream : public stream::ByteStream {
 public:
  // A stream over `ep` (enabled, bound to the owner's CQ, connected or
  // not), which it owns from now on: its buffers registered on `domain`
  // when `register_buffers` (FI_MR_LOCAL), its receives posted. Closed
  // streams leave their buffers in `retired`. With `reads`, large payloads
  // go by rendezvous. Writes of at most `inject_size` bytes (the
  // endpoint's, or 0) go by fi_inject: no completion, no buffer held.
  static absl::StatusOr<std::unique_ptr<MsgStream>> Open(
      fid_domain* domain, fid_ep* ep, bool register_buffers,
      RetiredBuffers* retired, const RmaReads* reads = nullptr,
      size_t inject_size = 0);
  ~MsgStream() override;
  MsgStream(const MsgStream&) = delete;
  MsgStream& operator=(const MsgStream&) = delete;

  ssize_t Write(const iovec* iov, size_t count) override;
  ssize_t Read(const iovec* iov, size_t count) override;
  // The received bytes in place: the rest of the oldest buffer (or spilled
  // chunk) read in part or not at all; Consume posts a buffer read to its
  // end again.
  const char* Peek(size_t* length) override;
  void Consume(size_t n) override;
  void Shutdown() override;
  // Read says when bytes are there: the owner calls it each pass.
  int fd() const override { return -1; }
  // Rendezvous (msg_stream_pull.cc).
  bool CanPull() const override { return reads_.cq != nullptr; }
  bool PeerCanPull() const override { return reads_.cq != nullptr; }
  std::unique_ptr<stream::PullJob> StartPull(const iovec* to, size_t to_count,
                                             const stream::RmaDescriptor* from,
                                             size_t from_count) override;
  absl::StatusOr<std::unique_ptr<stream::PullExposure>> Expose(
      const iovec* iov, size_t count, stream::RmaDescriptor* out) override;
  // A registration is kept until the peer has read the payload.
  bool ExposureKeepsNothing() const override { return false; }

  // The endpoint's connection is up: sends may start.
  void OnConnected() { connected_ = true; }
  // The connection ended (`err` > 0: it broke or never came up): reads
  // return what arrived before, then the end (0, or -err).
  void OnEnded(int err);
  // The peer shut the connection down (FI_SHUTDOWN). Messages may still be
  // on their way to the receive buffers (the event and the completions
  // travel apart): the stream ends once no receive is posted any more (each
  // has completed, or been flushed as the provider ends the connection).
  void OnPeerShutdown();
  // Whether a Read would return something (bytes, or the end).
  bool readable() const {
    return !arrived_.empty() || !spilled_.empty() || ended_;
  }
  // Whether every send has completed (the provider is done with them),
  // injected ones included (ConfirmInjects).
  bool sends_done() const {
    return ended_ || (free_tx_.size() == kTxBuffers &&
                      confirmed_injects_ == injected_);
  }
  // A provider may drop what is still in flight when its endpoint closes,
  // and an inject has no completion to wait for: when injects no completed
  // send covers are out, this posts an empty send, whose completion says
  // they arrived. For the owner about to close the stream (it asks again
  // while the queue is full); sends_done() says when.
  void ConfirmInjects();
  fid_ep* ep() const { return ep_; }
  // What writes the endpoint's completions straight into the owner's
  // buffer (util/cq.h CqReadDirectFrom), or null when its provider has
  // nothing of the kind.
  CqDirectProducer* direct_producer() const { return direct_producer_; }

  // The owner's CQ reported `op_context` (a StreamBuffer) done: a send
  // finished, or a receive took `len` bytes.
  static void DispatchCompletion(void* op_context, size_t len);
  // Its operation failed with `err` (positive fi_errno): the stream ends,
  // with that error for a send (its bytes were lost), in order for a
  // receive flushed as the connection ends (FI_ECANCELED, FI_ECONNRESET).
  static void DispatchError(void* op_context, int err);

 private:
  MsgStream(fid_domain* domain, fid_ep* ep,
            std::unique_ptr<StreamBuffers> buffers, RetiredBuffers* retired)
      : domain_(domain),
        ep_(ep),
        buffers_(std::move(buffers)),
        retired_(retired) {}

  int PostReceive(StreamBuffer* buffer);
  friend class RmaPull;
  // RmaPull::Finish: posts the job's reads that are not yet, then says
  // whether all are done.
  ssize_t AdvancePull(RmaPull* pull);

  fid_domain* domain_;
  fid_ep* ep_;
  CqDirectProducer* direct_producer_ = nullptr;
  std::unique_ptr<StreamBuffers> buffers_;
  RetiredBuffers* retired_;
  std::deque<StreamBuffer*> arrived_;  // received, in order, not read out
  // Bytes received while a pull waits (and until read), copied out of
  // their buffers so that the buffers take the peer's next messages: its
  // provider never stalls, and the answers to the pull's reads (on the
  // same connection for a provider that serves reads in software) and the
  // peer's own pulls get through. Newer than anything in arrived_.
  std::deque<std::string> spilled_;
  size_t spilled_offset_ = 0;  // of spilled_.front(), read
  bool pulling_ = false;       // an RmaPull of this stream is alive
  std::vector<StreamBuffer*> free_tx_;
  bool connected_ = false;
  bool peer_shutdown_ = false;
  size_t posted_rx_ = 0;  // receives posted and not completed
  bool ended_ = false;
  int error_ = 0;  // positive fi_errno the stream ended with, or 0
  RmaReads reads_;  // cq null: no rendezvous
  bool register_buffers_ = false;
  size_t inject_size_ = 0;
  uint64_t injected_ = 0;           // injects posted
  uint64_t confirmed_injects_ = 0;  // of those, covered by a completed send
  size_t reads_out_ = 0;  // reads of the pull under way
  int read_error_ = 0;    // positive fi_errno of one of them, or 0
};

}  // namespace rxm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_RXM_MSG_STREAM_H_

// File: fabric/providers/stream/connection.h
//
// One established connection in its data phase: a queue of outgoing
// messages written as the byte stream takes them, and a reader that splits the
// incoming stream into messages (wire.h) and asks its handler where
// each payload goes. Small messages arrive through a staging buffer (one
// recv for many); large ones are read straight into the application's
// buffer when no HMEM copy function has to see the bytes.
//
// Everything runs on the thread that calls Send or Progress, under the
// owning endpoint's lock; handler callbacks come from inside those calls.
#ifndef FABRIC_PROVIDERS_STREAM_CONNECTION_H_
#define FABRIC_PROVIDERS_STREAM_CONNECTION_H_

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <sys/uio.h>

#include <deque>
#include <memory>
#include <vector>

#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/stream/byte_stream.h"
#include "fabric/providers/stream/shared_copy.h"
#include "fabric/providers/stream/wire.h"

namespace fabric {

// An fi_cq_read's buffer (util/cq.h), where the completion of a message
// taken whole goes when the read asks the endpoint directly
// (CqDirectProducer).
struct CqReadBuffer;

namespace stream {

// Where an incoming message's payload goes.
struct RxTarget {
  enum Kind {
    kStall,    // not now: leave it in the stream and ask again later
    kDiscard,  // read and drop it
    kUser,     // into `iov` (memory of `iface`), bytes past `capacity` dropped
    kBuffer,   // appended to *buffer
  };
  Kind kind = kDiscard;
  const iovec* iov = nullptr;
  size_t iov_count = 0;
  size_t capacity = 0;
  fi_hmem_iface iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
  std::vector<char>* buffer = nullptr;
};

// Payloads at least this long stay in the sender's memory when the peer can
// copy them from there (kPayloadInSender): one copy instead of two through
// the stream; a message's costs an answer's round trip.
inline constexpr uint64_t kPayloadInPlaceMin = 16 * 1024;

// An outgoing message and what its completion reports.
struct TxEntry {
  // header and descriptors are written as one contiguous block.
  Header header = {};
  RmaDescriptor descriptors[kMaxRmaCount] = {};
  std::vector<iovec> payload;  // the application's memory, or `owned`
  std::vector<char> owned;     // a copy taken at post time (inject, bounce)
  size_t sent = 0;             // bytes of the whole message written so far

  // Completion (filled by the endpoint).
  fi_cq_tagged_entry completion = {};
  bool write_entry = false;    // a CQ entry on success
  bool reserved = false;       // its CQ slot was reserved
  int cntr = 0;                // CntrKind counted on completion
  bool report = true;          // false for internal messages (acks)
  bool awaits_answer = false;  // completes on kAck / kReadResponse
  bool fence = false;          // FI_FENCE: waits for earlier answers
  // kPayloadInSender: what the stream keeps while the peer copies the
  // payload (ByteStream::Expose), until the kAck.
  std::unique_ptr<PullExposure> exposure;
  // kReadRequest: where the data read goes.
  std::vector<iovec> read_iov;
  fi_hmem_iface read_iface = FI_HMEM_SYSTEM;
  uint64_t read_device = 0;

  size_t head_size() const {
    return sizeof(Header) + header.rma_count * sizeof(RmaDescriptor);
  }
  // Back to a new entry's state, keeping the vectors' memory for reuse.
  void Reset();
  // What goes into the stream: the payload stays out when the peer copies
  // it from the sender (kPayloadInSender).
  size_t wire_size() const {
    return head_size() +
           ((header.flags & kPayloadInSender) != 0 ? 0 : header.size);
  }
};

class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  // A message arrived (header and descriptors checked); where does its
  // payload go?
  virtual RxTarget OnHeader(const Header& header,
                            const RmaDescriptor* descriptors) = 0;
  // The payload is all read; `placed` bytes went to the target.
  virtual void OnMessageDone(const Header& header, size_t placed) = 0;
  // A plain message (wire.h IsPlainMessage) whose whole payload lies at
  // `payload`: true when the handler took it at once (a posted receive
  // took it and is complete), false for the general way (OnHeader, the
  // payload, OnMessageDone). Most small messages take this path, which
  // skips what only other messages need. `direct` (may be null): where its
  // completion goes (TakeWholeNow).
  virtual bool TakeWholeMessage(const Header& header, const char* payload,
                                CqReadBuffer* direct) {
    (void)header, (void)payload, (void)direct;
    return false;
  }
  // Every byte of `entry` is with the kernel.
  virtual void OnSent(std::unique_ptr<TxEntry> entry) = 0;
  // The connection broke: -fi_errno, or 0 when the peer closed it.
  virtual void OnClosed(int error) = 0;
  // The stream takes no more bytes for now (wait for writability) or does
  // again.
  virtual void OnBacklog(bool backlogged) = 0;
  // A message now waits for the handler (it answered kStall), or no longer
  // does.
  virtual void OnStalled(bool stalled) { (void)stalled; }
};

class Connection {
 public:
  // `copier` moves every byte from and to the application's buffers.
  Connection(std::unique_ptr<ByteStream> stream, ConnectionHandler* handler,
             const HmemCopier* copier);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The stream's fd, or -1 when Progress must be called to find bytes.
  int fd() const { return stream_->fd(); }
  // Whether the peer can copy this side's memory (ByteStream::PeerCanPull).
  bool PeerCanPull() const { return stream_->PeerCanPull(); }
  // ByteStream::ExposureKeepsNothing and Expose of the stream.
  bool ExposureKeepsNothing() const { return stream_->ExposureKeepsNothing(); }
  absl::StatusOr<std::unique_ptr<PullExposure>> Expose(const iovec* iov,
                                                      size_t count,
                                                      RmaDescriptor* out) {
    return stream_->Expose(iov, count, out);
  }
  bool closed() const { return closed_; }
  // The handler last answered kStall: the message waits (perhaps already
  // read from the socket, so no readiness will announce it again).
  bool stalled() const { return stalled_; }
  // A shared copy waits for chunks its sender is writing (kAwaitCopy): a
  // poll finishes it soon, and no doorbell will announce it.
  bool AwaitingCopy() const { return state_ == ReadState::kAwaitCopy; }
  // Whether Progress() could do anything without new bytes from the
  // stream: transmits queued, bytes read but not dispatched, a message
  // partly read or waiting for a receive.
  bool HasWorkWithoutInput() const {
    return !queue_.empty() || end_ > begin_ || stalled_ ||
           state_ != ReadState::kHeader;
  }

  // Queues `entry` and writes what the socket takes now (nothing while
  // held).
  void Send(std::unique_ptr<TxEntry> entry);
  // Whether bytes written now would be the next on the stream: open, not
  // held, nothing queued.
  bool CanWriteNow() const { return !closed_ && !held_ && queue_.empty(); }
  // When CanWriteNow(), writes `iov` straight to the stream: the bytes it
  // took, or -errno (-EAGAIN: none). The caller queues the rest, and a
  // broken stream closes when that is flushed.
  ssize_t WriteNow(const iovec* iov, size_t count) {
    return stream_->Write(iov, count);
  }
  // While held, Send only queues and Progress does nothing: the socket is
  // still in a handshake that someone else reads and writes.
  void Hold() { held_ = true; }
  // Ends Hold(): writes what queued meanwhile and reads what has arrived.
  void Release();
  // Writes what is queued, then reads and dispatches what has arrived.
  void Progress();

  // What TakeWholeNow found at the start of the stream.
  enum class Whole {
    kTaken,  // a message, which the handler took (TakeWholeMessage)
    kNone,   // nothing
    kOther,  // something only Progress() handles
  };
  // For a stream that lends its bytes (ByteStream::Peek), with no work
  // without input (HasWorkWithoutInput): hands the plain message at the
  // start of the stream, arrived whole, to the handler with `direct`. The
  // shortest way a message is read: what an fi_cq_read that asks the
  // endpoint directly takes.
  Whole TakeWholeNow(CqReadBuffer* direct);
  // Stops the connection (the stream shuts down and stays open until
  // destruction) and reports OnClosed(error) once.
  void Close(int error);
  // The messages not yet fully written (after Close: to fail them).
  std::deque<std::unique_ptr<TxEntry>> TakeQueued();

 private:
  // kAwaitCopy: a shared copy's chunks that the sender claimed are still
  // being written (shared_), or the stream's copy is under way (pull_).
  enum class ReadState { kHeader, kPayload, kAwaitCopy };

  // What ReadInPlace did: handled a message, could not (the bytes are
  // not there whole, or the stream lends none: read through staging), or
  // must stop (stalled or closed).
  enum class InPlace { kDone, kNo, kStop };

  // A kPayloadInSender message, write or read's data written whole (and
  // not yet answered), whose receiver may ask for help copying it
  // (kAssist): where its bytes are.
  struct Lent {
    uint64_t id;
    uint64_t size;
    iovec pieces[kMaxRmaCount];
    uint16_t count;
  };

  void Flush();
  void ReadInput();
  // Sets stalled_, telling the handler when it changes.
  void SetStalled(bool stalled);
  InPlace ReadInPlace();
  // Copies the header at `bytes` into header_ and checks it; false when the
  // connection closed for it.
  bool TakeHeader(const char* bytes);
  // header_ is a plain message whose payload is at `payload`, where
  // `available` bytes are: true when the handler took it whole
  // (TakeWholeMessage with `direct`; the connection may have closed
  // meanwhile).
  bool TookWholeMessage(const char* payload, size_t available,
                        CqReadBuffer* direct = nullptr);
  // Copies header_'s RMA descriptors at `bytes` into `descriptors` and
  // checks them; false when the connection closed for them.
  bool TakeDescriptors(const char* bytes, RmaDescriptor* descriptors);
  // True once the staging buffer holds `bytes` unread bytes.
  bool Fill(size_t bytes);
  // False when the socket has nothing (or the connection closed).
  bool RecvIntoStaging();
  bool ReadDirect();
  // What a read returned (bytes or -errno): true for bytes; false for
  // nothing yet or the end of the connection (which it closes).
  bool GotBytes(ssize_t n);
  void Place(const char* data, size_t len);
  // Copies a kPayloadInSender payload from the sender's memory (named by
  // the header's payload descriptors, wire.h PayloadDescriptors) into the
  // target; false when the connection closed instead.
  bool PullPayload(const RmaDescriptor* descriptors);
  // PullPayload of `want` bytes from `remote` into host memory `local`,
  // shared with the sender (shared_copy.h): asks for its help, copies
  // what it does not claim, and leaves the job in shared_ (state
  // kAwaitCopy) for FinishSharedCopy.
  void StartSharedCopy(std::vector<iovec> local, const iovec* remote,
                       size_t remote_count, uint64_t want);
  // Whether StartSharedCopy may copy `want` bytes into `local`.
  bool CanPullShared(const std::vector<iovec>& local, uint64_t want) const;
  // kAwaitCopy: true once the shared copy is done (state back to kHeader,
  // placed_ set); false while it waits (for about 200 us first with
  // `spin`), or when the connection closed for it.
  bool FinishSharedCopy(bool spin);
  // kAwaitCopy: FinishSharedCopy, or the same for the stream's copy
  // (pull_), placing a bounce buffer's bytes once it is done.
  bool FinishAwaitedCopy(bool spin);
  // Waits for the sender's chunks of an unfinished shared copy (the
  // connection closes) and drops it.
  void AbandonSharedCopy();
  // Handles messages that are the connection's own business before the
  // handler sees them: true for a kAssist (helped with, consumed by the
  // caller), false for the others; keeps `lent_` for kAck.
  bool Intercept(const RmaDescriptor* descriptors);
  // Copies the chunks of the peer's copy job that it can claim (kAssist),
  // of a payload in `lent` (lent_ or lent_reads_).
  void HelpCopy(const RmaDescriptor* to, std::deque<Lent>* lent);
  bool CanReadDirect() const;

  const std::unique_ptr<ByteStream> stream_;
  ConnectionHandler* const handler_;
  const HmemCopier* const copier_;
  bool closed_ = false;
  bool backlogged_ = false;
  bool stalled_ = false;
  bool held_ = false;
  // A read in this Progress() call got less than it asked for: the stream
  // is empty, and asking again would only cost a system call. Readiness
  // brings the next call.
  bool drained_ = false;
  // The last message's payload was large: the next header is read alone,
  // so that its payload, likely large too, goes straight to the
  // application's buffer instead of filling the staging buffer first (a
  // 64 KiB message went through staging whole and was copied once more).
  bool header_alone_ = false;

  std::deque<std::unique_ptr<TxEntry>> queue_;
  // The iovec list of one sendmsg or readv, kept to save an allocation per
  // message.
  std::vector<iovec> scratch_iov_;

  // Left uninitialized: the kernel backs only the pages messages touch, so
  // an idle or small-message connection costs a few KiB, not 64.
  std::unique_ptr<char[]> staging_;
  size_t begin_ = 0;  // unread bytes are staging_[begin_, end_)
  size_t end_ = 0;
  ReadState state_ = ReadState::kHeader;
  Header header_ = {};
  RxTarget target_;
  uint64_t remaining_ = 0;  // payload bytes still to read
  size_t placed_ = 0;       // payload bytes given to the target

  std::deque<Lent> lent_;  // in sending order (only with an OutgoingShare)
  // The same for reads' data left in place, by the reader's request id
  // (kAssistsReadData): no answer releases them, so the oldest go when a
  // later one is asked for, or beyond kMaxLentReads.
  std::deque<Lent> lent_reads_;
  uint32_t last_job_ = 0;  // the last copy job this side started
  std::unique_ptr<SharedCopy> shared_;  // the message's, in kAwaitCopy
  // Or the stream's copy (StartPull) in kAwaitCopy, of pull_want_ bytes,
  // into pull_bounce_ when the target is device memory.
  std::unique_ptr<PullJob> pull_;
  uint64_t pull_want_ = 0;
  std::vector<char> pull_bounce_;
};

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_CONNECTION_H_

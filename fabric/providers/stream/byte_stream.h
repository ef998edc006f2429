// File: fabric/providers/stream/byte_stream.h
//
// The byte stream under a Connection: a connected TCP socket (tcp), a pair
// of shared-memory rings (shm), a connected MSG endpoint of another
// provider (rxm). Non-blocking: calls move what they can now and
// never wait, except that a copy of the peer's memory (Pull, PullFrom)
// runs to its end (StartPull does not).
#ifndef FABRIC_PROVIDERS_STREAM_BYTE_STREAM_H_
#define FABRIC_PROVIDERS_STREAM_BYTE_STREAM_H_

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "fabric/providers/stream/wire.h"

namespace fabric {
namespace stream {

// Where the receiver of a large kPayloadInSender message and its sender
// split copying it (kAssist, wire.h): memory both processes map. One
// per direction; the receiver starts a job for each message it copies.
struct CopyShare {
  // (job << 32) | the next chunk to claim; either side claims a chunk by
  // advancing it with a compare-and-swap while the job is its own.
  std::atomic<uint64_t> claim;
  // Chunks the sender claimed and finished, and whether one of its copies
  // failed (the receiver then copies those chunks itself).
  std::atomic<uint32_t> sender_done;
  std::atomic<uint32_t> sender_failed;
};

// What a stream keeps while the peer may copy a payload it exposed
// (ByteStream::Expose): registrations, released when this is destroyed.
class PullExposure {
 public:
  virtual ~PullExposure() = default;
};

// A copy of the peer's payload under way (ByteStream::StartPull).
class PullJob {
 public:
  virtual ~PullJob() = default;
  // Moves the copy on: the bytes copied once it is done, -EAGAIN while it
  // is under way, or another -errno when it failed.
  virtual ssize_t Finish() = 0;
};

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Bytes written (> 0), or -errno: -EAGAIN when nothing fits now.
  virtual ssize_t Write(const iovec* iov, size_t count) = 0;
  // Bytes read (> 0), 0 at the peer's orderly end, or -errno: -EAGAIN when
  // nothing has arrived.
  virtual ssize_t Read(const iovec* iov, size_t count) = 0;
  // Ends both directions; the peer then reads the end.
  virtual void Shutdown() = 0;
  // The fd whose readability announces bytes, or -1 when the stream is
  // polled by calling Read.
  virtual int fd() const = 0;

  // Whether this side can copy the peer's memory (Pull), and whether the
  // peer can copy ours, so that large payloads may stay in the sender's
  // memory (wire.h, kPayloadInSender). Sockets: neither.
  virtual bool CanPull() const { return false; }
  virtual bool PeerCanPull() const { return false; }
  // Copies the peer's memory `from` into `to`: bytes copied or -errno.
  virtual ssize_t Pull(const iovec* to, size_t to_count, const iovec* from,
                       size_t from_count);
  // Copies the peer's payload named by `from` (descriptors as the peer's
  // Expose filled them) into `to`: bytes copied (at most what `to` holds)
  // or -errno. By default Pull of the descriptors' addresses.
  virtual ssize_t PullFrom(const iovec* to, size_t to_count,
                           const RmaDescriptor* from, size_t from_count);
  // PullFrom without waiting, for streams whose copies take time (a
  // device's reads): the job, which the caller moves on with Finish until
  // it is done, or null when the stream copies only with PullFrom. `to`
  // must stay valid until the job is done or destroyed.
  virtual std::unique_ptr<PullJob> StartPull(const iovec* to,
                                             size_t to_count,
                                             const RmaDescriptor* from,
                                             size_t from_count) {
    (void)to, (void)to_count, (void)from, (void)from_count;
    return nullptr;
  }
  // Before a payload of `count` pieces is left for the peer to copy: the
  // descriptors it is named by on the wire, filled in `out`, and what must
  // stay alive until the peer has copied it (null: nothing). By default
  // each piece's address and length, key 0 (the peer copies by address).
  // A failure sends the payload through the stream instead.
  virtual absl::StatusOr<std::unique_ptr<PullExposure>> Expose(
      const iovec* iov, size_t count, RmaDescriptor* out);
  // Whether Expose never needs anything kept (the default's copy by
  // address), so that a payload may be left for the peer with no answer
  // awaited (a read's data, wire.h).
  virtual bool ExposureKeepsNothing() const { return true; }
  // Copies `from` in this side's memory to the peer's memory `to`: bytes
  // copied or -errno (when CanPull: the access goes both ways).
  virtual ssize_t Push(const iovec* from, size_t from_count, const iovec* to,
                       size_t to_count);
  // Whether the peer process still exists (a copy's helper that stops
  // answering may have died).
  virtual bool PeerAlive() const { return true; }
  // The CopyShare of the messages this side receives, and of those it
  // sends; null for streams without one (sockets).
  virtual CopyShare* IncomingShare() { return nullptr; }
  virtual CopyShare* OutgoingShare() { return nullptr; }

  // Streams whose bytes arrive in memory this side can read in place (the
  // shm rings, rxm's receive buffers): the unread bytes that lie contiguous
  // from the next one, in *length (0: none has arrived), or null when the
  // stream cannot lend them (sockets; or the stream ended, which Read
  // reports). The memory may be another process's writing (a ring): copy
  // what is checked before checking it. Consume(n) frees the first n of
  // them.
  virtual const char* Peek(size_t* length) {
    *length = 0;
    return nullptr;
  }
  virtual void Consume(size_t n) { (void)n; }

  // More bytes of a message being read are on their way: acknowledge what
  // arrived at once instead of later. Sockets: TCP_QUICKACK. A connection
  // that carries messages both ways looks interactive to Linux, which then
  // delays its ACKs to ride on replies; the sender of a large message
  // waits for them to open its window (1 MiB over loopback took twice as
  // long). Other streams: nothing.
  virtual void AcknowledgeNow() {}
};

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_BYTE_STREAM_H_

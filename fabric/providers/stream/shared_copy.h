// File: fabric/providers/stream/shared_copy.h
//
// Copying a large kPayloadInSender message with both processes at once
// (kAssist, wire.h): the receiver starts a job in the stream's
// CopyShare and asks the sender for help; each side claims chunks of
// kAssistChunk bytes with a compare-and-swap and copies them, the receiver
// reading the sender's memory (ByteStream::Pull), the sender writing the
// receiver's (Push). The receiver copies whatever the sender does not
// claim, and hands the buffer back only after the sender wrote every
// chunk it claimed; a chunk whose copy failed on the sender's side it
// copies again.
//
//   SharedCopy copy(stream, job, local, remote, remote_count, want);
//   copy.CopyOwnChunks();           // after asking the sender (kAssist)
//   int rc = copy.Finish(/*spin=*/true);  // -FI_EAGAIN: ask again later
#ifndef FABRIC_PROVIDERS_STREAM_SHARED_COPY_H_
#define FABRIC_PROVIDERS_STREAM_SHARED_COPY_H_

#include <stdint.h>
#include <sys/uio.h>

#include <chrono>
#include <vector>

#include "fabric/providers/stream/byte_stream.h"
#include "fabric/providers/stream/wire.h"

namespace fabric {
namespace stream {

// The receiver's side of one job.
class SharedCopy {
 public:
  // Job `job` (not 0) of copying `want` bytes from the sender's `remote`
  // into `local` (host memory) through `stream`'s IncomingShare, which it
  // resets and publishes.
  SharedCopy(ByteStream* stream, uint32_t job, std::vector<iovec> local,
             const iovec* remote, size_t remote_count, uint64_t want);

  // Claims and copies chunks until none is left or a copy fails; the job
  // is closed to further claims after it.
  void CopyOwnChunks();

  // 0 once every byte is placed; -FI_EAGAIN while chunks the sender
  // claimed are still being written (after up to about 200 us of waiting
  // with `spin`); another negative fi_errno when the copy failed (the
  // sender died: -FI_ECONNRESET). Only after CopyOwnChunks.
  int Finish(bool spin);

  // Before giving the buffer up unfinished (the connection closes): waits
  // for the chunks the sender is writing, while it is alive, for up to a
  // second. A sender stopped longer (a debugger) is given up on, with a
  // warning: it may still write into the buffer when it resumes.
  void Abandon();

  uint64_t want() const { return want_; }
  uint64_t chunks() const { return chunks_; }
  // The chunks the sender copied (once Finish returned 0).
  uint64_t sender_chunks() const { return claimed_ - own_; }

 private:
  // Copies chunk `c` from the sender: 0 or a negative fi_errno.
  int CopyChunk(uint64_t c);
  bool SenderDone() const;

  ByteStream* const stream_;
  CopyShare* const share_;
  const uint32_t job_;
  const std::vector<iovec> local_;
  iovec remote_[kMaxRmaCount];
  const size_t remote_count_;
  const uint64_t want_;
  const uint64_t chunks_;
  std::vector<bool> mine_;  // chunks this side copied
  uint64_t own_ = 0;
  uint64_t claimed_ = 0;  // by both sides, when the job closed
  int error_ = 0;         // of this side's copies
  std::chrono::steady_clock::time_point next_alive_check_;
  std::vector<iovec> to_, from_;  // a chunk's pieces
};

// The sender's side: copies the chunks of the receiver's job `job` (of
// `want` bytes) that it can claim, from its own `from` to the receiver's
// `to`, through `stream`'s OutgoingShare. Returns the chunks it copied.
uint64_t HelpCopy(ByteStream* stream, uint32_t job, const iovec* from,
                  size_t from_count, const iovec* to, size_t to_count,
                  uint64_t want);

// Appends to `out` the pieces of `iov` from byte `offset` on, at most
// `limit` bytes and `max_pieces` pieces in all.
void SliceIov(const iovec* iov, size_t count, size_t offset, size_t limit,
              size_t max_pieces, std::vector<iovec>* out);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_SHARED_COPY_H_

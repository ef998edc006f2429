// File: fabric/providers/shm/shm_ring.h
//
// A lock-free single-producer single-consumer byte ring that lives in shared
// memory. The two sides may be two processes that map the memory at
// different addresses, so the ring holds no pointers: a header of indices
// followed by `capacity` bytes of data. The indices count bytes ever written
// (tail) and read (head); `index & (capacity - 1)` is the position.
//
// Each Write places one chunk: an 8-byte control word (kChunkMagic and the
// chunk's length), the bytes, padding to 8 bytes. The control word is what
// the consumer polls, so that the bytes of a small chunk come with the
// word that says they are there (one cache miss where a separate tail
// index cost two: the index's line, then the bytes'; fi_pingpong shm rdm
// 64 B, 15 alternating rounds: 0.61 -> 0.53 us). The producer writes the
// bytes, a zero word where the next chunk will start, then the control
// word: the word the consumer finds after a chunk is that zero or the
// next chunk's, never what an earlier lap left there.
//
// The memory is shared with another process and so untrusted: Attach checks
// the header, Write re-checks the consumer's index, and the consumer each
// control word. A ring where either is impossible (a broken or hostile
// peer) is corrupt() from then on, and moves no more bytes.
//
//   void* mem = segment.payload();               // 64-byte aligned
//   ByteRing producer = *ByteRing::Init(mem, 1 << 16);
//   ByteRing consumer = *ByteRing::Attach(mem, ByteRing::BytesNeeded(1 << 16));
//   iovec out = {data, len};
//   size_t sent = producer.Write(&out, 1, /*skip=*/0);  // 0 when full
//   iovec in = {buf, sizeof(buf)};
//   size_t got = consumer.Read(&in, 1);                 // 0 when empty
//   if (got == 0 && consumer.corrupt()) { /* drop the peer */ }
//
// Each side has its own ByteRing: the producer calls Write, Writable and
// CloseWriter; the consumer Read, Readable, Peek, Consume and CloseReader.
#ifndef FABRIC_PROVIDERS_SHM_SHM_RING_H_
#define FABRIC_PROVIDERS_SHM_SHM_RING_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <atomic>

#include "absl/status/statusor.h"

namespace fabric {
namespace shm {

// The ring's header in shared memory; the data follows it. The indices sit
// on cache lines of their own so that the two sides do not share one. The
// consumer does not poll the tail (it polls control words); it tells
// Attach where a producer resumes.
struct RingHeader {
  std::atomic<uint64_t> capacity;          // a power of two, set by Init
  std::atomic<uint32_t> writer_closed;     // 1 once the producer is done
  std::atomic<uint32_t> reader_closed;     // 1 once the consumer is gone
  // Random, set by Init: what names the ring to ThreadSanitizer in a
  // process that maps it twice (shm_ring.cc).
  std::atomic<uint64_t> sync_id;
  alignas(64) std::atomic<uint64_t> tail;  // bytes ever written
  alignas(64) std::atomic<uint64_t> head;  // bytes ever read
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "indices are shared between processes");

// A chunk's control word: kChunkMagic in the high half, the length of its
// bytes in the low one.
inline constexpr uint64_t kChunkMagic = 0x72696e67;  // "ring"
// The control word, and the zero word the next chunk starts with.
inline constexpr size_t kChunkOverhead = 16;
inline constexpr size_t kChunkAlign = 8;

class ByteRing {
 public:
  // The smallest capacity: a chunk of 8 bytes and its words.
  static constexpr size_t kMinCapacity = 32;

  // The bytes a ring of `capacity` data bytes takes: header and data.
  static size_t BytesNeeded(size_t capacity);

  // Lays out an empty ring at `mem` (BytesNeeded(capacity) bytes, aligned
  // to alignof(RingHeader)). FI_EINVAL when capacity is not a power of two
  // of at least kMinCapacity or mem is misaligned.
  static absl::StatusOr<ByteRing> Init(void* mem, size_t capacity);

  // Uses the ring another side laid out at `mem`, `mem_size` bytes. FI_EINVAL
  // unless the header is sound: mem aligned, capacity a power of two (at
  // least kMinCapacity) that fits in mem_size, 0 <= tail - head <=
  // capacity, both on chunk boundaries (a consumer attaches before it
  // reads).
  static absl::StatusOr<ByteRing> Attach(void* mem, size_t mem_size);

  // Copies bytes of iov[0..count) into the ring as one chunk, leaving out
  // the first `skip` bytes of the list, as many as fit; publishes them to
  // the consumer. Returns the bytes written: 0 when full or corrupt.
  size_t Write(const iovec* iov, size_t count, size_t skip);

  // Moves up to the iov total of readable bytes (of as many chunks as
  // there are) into iov[0..count) and frees their space. Returns the bytes
  // read: 0 when empty or corrupt.
  size_t Read(const iovec* iov, size_t count);

  // The readable bytes of the chunk at the consumer's position that lie
  // contiguous (up to the end of the data area), in *length (0 when there
  // are none); null when the ring is corrupt. Consume(n) (n <= *length)
  // frees the first n of them, as a Read of them would.
  const char* Peek(size_t* length);
  void Consume(size_t n);

  // Whether a Read would take bytes now (false when corrupt). Inline: a
  // polling loop asks on every pass.
  bool Readable() const {
    if (corrupt_) return false;
    return left_ > 0 || ControlAt(head_).load(std::memory_order_acquire) != 0;
  }
  // The most bytes one Write could place now (0 when corrupt).
  size_t Writable() const;

  void CloseWriter();
  void CloseReader();
  bool writer_closed() const {
    return header_->writer_closed.load(std::memory_order_acquire) != 0;
  }
  bool reader_closed() const;
  // The writer closed and every byte it wrote has been read: an orderly end.
  // (The flag first: once it is seen, every byte written before it is
  // visible to Readable.)
  bool AtEnd() const { return writer_closed() && !Readable(); }

  // Whether impossible indices were seen; sticky.
  bool corrupt() const { return corrupt_; }
  size_t capacity() const { return capacity_; }

 private:
  // `head` and `tail` as Init or Attach found (and checked) them.
  ByteRing(RingHeader* header, uint64_t capacity, uint64_t head, uint64_t tail);

  // tail - head, or 0 with corrupt_ set when it exceeds the capacity.
  uint64_t Used(uint64_t head, uint64_t tail) const {
    if (corrupt_) return 0;
    uint64_t used = tail - head;  // unsigned: also catches head > tail
    if (used <= capacity_) return used;
    MarkCorrupt(head, tail);
    return 0;
  }
  // Logs the impossible indices and sets corrupt_; out of line, so that
  // Used stays small.
  void MarkCorrupt(uint64_t head, uint64_t tail) const;
  // The control word of a chunk starting at `index` (a multiple of
  // kChunkAlign, so that it never straddles the end of the data).
  std::atomic<uint64_t>& ControlAt(uint64_t index) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(data_ +
                                                     (index & (capacity_ - 1)));
  }
  // Consumer: enters the chunk at head_ when its control word is there
  // (false when not, or when it is impossible: then corrupt).
  bool EnterChunk();
  // Consumer: moves past `n` bytes of the chunk it is in (and its padding
  // when they were the last), and publishes its index.
  void Advance(size_t n);
  void CopyIn(uint64_t index, const char* src, size_t n);
  // Copies `n` bytes of iov[0..count), from `skip` bytes into the list on.
  void CopyIn(uint64_t index, const iovec* iov, size_t count, size_t skip,
              size_t n);
  // Copies all of iov[0..count) to `out` (in the data area, not wrapping):
  // the bytes past the first `first`, then (after PublishAfterCopies) the
  // first `first`, which share the control word's cache line.
  void CopyChunkOfList(char* out, const iovec* iov, size_t count, size_t first);
  void CopyOut(uint64_t index, char* dst, size_t n) const;
  // Hands the data bytes [index, index + n) to the shared cache for the
  // consumer (shm_ring.cc).
  void Demote(uint64_t index, size_t n) const;

  RingHeader* header_;
  char* data_;
  uint64_t capacity_;  // read once at Init/Attach: the peer cannot change ours
  void* sync_ = nullptr;  // ThreadSanitizer builds: the ring's sync object
  mutable bool corrupt_ = false;
  // Consumer: its own index, which only it moves (the shared copy is for
  // the producer), and the bytes of the chunk it is in that are left
  // (none: head_ is where the next chunk's control word goes).
  uint64_t head_ = 0;
  uint64_t left_ = 0;
  // Producer: its own index, kept here too: loading the shared copy, which
  // the consumer polls, waited for its cache line (82% of the time
  // ByteRing::Write took, perf of fi_pingpong shm 64 B).
  uint64_t tail_ = 0;
  // Producer: the consumer's index as last loaded (it only grows, so the
  // room it implies is never more than there is).
  uint64_t seen_head_ = 0;
};

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_RING_H_

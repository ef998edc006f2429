#include "fabric/providers/shm/shm_ring.h"

#include <rdma/fi_errno.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/api/config/log.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace shm {
namespace {

#if defined(__SANITIZE_THREAD__)
}  // namespace
}  // namespace shm
}  // namespace fabric
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
namespace fabric {
namespace shm {
namespace {

// Both ends of a ring in one process (two endpoints of one process, as in
// tests) map its memory at two addresses, so ThreadSanitizer cannot pair
// the release of an index with its acquire: both ends tell it through one
// object per ring, found by the ring's id.
void* SyncObject(uint64_t id) {
  static std::mutex mutex;
  static auto* objects =
      new std::unordered_map<uint64_t, std::unique_ptr<char>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<char>& object = (*objects)[id];
  if (object == nullptr) object = std::make_unique<char>();
  return object.get();
}
void Released(void* sync) { __tsan_release(sync); }
void Acquired(void* sync) { __tsan_acquire(sync); }
#else
void* SyncObject(uint64_t) { return nullptr; }
void Released(void*) {}
void Acquired(void*) {}
#endif

// Writes up to this long have their cache lines demoted (below).
constexpr size_t kDemoteMax = 4096;

// Asks the CPU to move the cache lines of [begin, begin + n) from this
// core's private caches to the shared one, where the consumer's core finds
// them without snooping ours: CLDEMOTE, a hint that CPUs without it execute
// as a NOP. A 112-byte message in a two-process ring ping-pong: 215 -> 165
// ns one way (Xeon with cldemote, the two processes on two CPUs).
void DemoteToSharedCache(const char* begin, size_t n) {
#if defined(__x86_64__)
  const char* line = reinterpret_cast<const char*>(
      reinterpret_cast<uintptr_t>(begin) & ~uintptr_t{63});
  for (; line < begin + n; line += 64) {
    asm volatile("cldemote (%0)" : : "r"(line) : "memory");
  }
#else
  (void)begin;
  (void)n;
#endif
}

// Holds back the store of the control word until the copies before it
// have executed (LFENCE). Otherwise the CPU asks for the word's cache line
// as soon as it sees that store, while the bytes' stores still wait to be
// written: the consumer, which polls that line, takes it back and forth
// with the producer meanwhile, and sees the word later. With the fence
// the line moves once. (Measured when the consumer polled a tail index:
// fi_pingpong shm rdm 64 B, 7 alternating rounds: 0.474 -> 0.419 us; a
// pause or an rdtsc there did the same; a plain store before it did not.)
void PublishAfterCopies() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_lfence();
#endif
}

bool IsPowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

bool IsCapacity(uint64_t n) {
  return IsPowerOfTwo(n) && n >= ByteRing::kMinCapacity;
}

uint64_t Padded(uint64_t n) {
  return (n + kChunkAlign - 1) & ~uint64_t{kChunkAlign - 1};
}

// The most bytes one chunk carries in `room` free bytes: its control word
// and the next chunk's zero word take kChunkOverhead, its padding the
// rest. (Indices are multiples of kChunkAlign at chunk boundaries, so
// `room` is one too there.)
uint64_t ChunkBytesIn(uint64_t room) {
  return room > kChunkOverhead
             ? (room - kChunkOverhead) & ~uint64_t{kChunkAlign - 1}
             : 0;
}

bool IsAligned(const void* mem) {
  return reinterpret_cast<uintptr_t>(mem) % alignof(RingHeader) == 0;
}

absl::Status Misaligned(const void* mem) {
  return FiError(FI_EINVAL, absl::StrFormat("ring memory at %p is not "
                                            "%zu-byte aligned",
                                            mem, alignof(RingHeader)));
}

}  // namespace

size_t ByteRing::BytesNeeded(size_t capacity) {
  return sizeof(RingHeader) + capacity;
}

absl::StatusOr<ByteRing> ByteRing::Init(void* mem, size_t capacity) {
  if (mem == nullptr || !IsAligned(mem)) return Misaligned(mem);
  if (!IsCapacity(capacity)) {
    return FiError(FI_EINVAL, absl::StrCat("ring capacity ", capacity,
                                           " is not a power of two of at "
                                           "least ",
                                           kMinCapacity));
  }
  auto* header = new (mem) RingHeader{};
  header->capacity.store(capacity, std::memory_order_relaxed);
  // The first chunk's control word: none yet.
  new (reinterpret_cast<char*>(mem) + sizeof(RingHeader))
      std::atomic<uint64_t>(0);
  std::random_device random;
  header->sync_id.store((uint64_t{random()} << 32) | random(),
                        std::memory_order_relaxed);
  return ByteRing(header, capacity, 0, 0);
}

absl::StatusOr<ByteRing> ByteRing::Attach(void* mem, size_t mem_size) {
  if (mem == nullptr || !IsAligned(mem)) return Misaligned(mem);
  if (mem_size < sizeof(RingHeader)) {
    return FiError(FI_EINVAL, absl::StrCat("ring memory of ", mem_size,
                                           " bytes holds no header"));
  }
  auto* header = static_cast<RingHeader*>(mem);
  uint64_t capacity = header->capacity.load(std::memory_order_relaxed);
  if (!IsCapacity(capacity) || capacity > mem_size - sizeof(RingHeader)) {
    return FiError(FI_EINVAL, absl::StrCat("ring capacity ", capacity, " in ",
                                           mem_size, " bytes"));
  }
  uint64_t head = header->head.load(std::memory_order_acquire);
  uint64_t tail = header->tail.load(std::memory_order_acquire);
  if (tail - head > capacity || tail % kChunkAlign != 0 ||
      head % kChunkAlign != 0) {
    return FiError(FI_EINVAL, absl::StrCat("ring indices head ", head, " tail ",
                                           tail, " capacity ", capacity));
  }
  return ByteRing(header, capacity, head, tail);
}

ByteRing::ByteRing(RingHeader* header, uint64_t capacity, uint64_t head,
                   uint64_t tail)
    : header_(header),
      data_(reinterpret_cast<char*>(header) + sizeof(RingHeader)),
      capacity_(capacity),
      sync_(SyncObject(header->sync_id.load(std::memory_order_relaxed))),
      head_(head),
      tail_(tail),
      seen_head_(head) {}

void ByteRing::MarkCorrupt(uint64_t head, uint64_t tail) const {
  FABRIC_LOG_WARN(nullptr, FI_LOG_EP_DATA,
                  "shm ring corrupt: head %lu tail %lu capacity %lu\n",
                  static_cast<unsigned long>(head),
                  static_cast<unsigned long>(tail),
                  static_cast<unsigned long>(capacity_));
  corrupt_ = true;
}

void ByteRing::CopyIn(uint64_t index, const char* src, size_t n) {
  size_t offset = index & (capacity_ - 1);
  size_t first = std::min<size_t>(n, capacity_ - offset);
  memcpy(data_ + offset, src, first);
  if (first < n) memcpy(data_, src + first, n - first);  // wrapped
}

void ByteRing::CopyIn(uint64_t index, const iovec* iov, size_t count,
                      size_t skip, size_t n) {
  const size_t offset = index & (capacity_ - 1);
  const bool wraps = n > capacity_ - offset;
  char* out = data_ + offset;
  for (size_t i = 0; i < count && n > 0; ++i) {
    size_t len = iov[i].iov_len;
    if (skip >= len) {
      skip -= len;
      continue;
    }
    size_t piece = std::min(len - skip, n);
    const char* src = static_cast<const char*>(iov[i].iov_base) + skip;
    if (wraps) {
      CopyIn(index, src, piece);
    } else {
      memcpy(out, src, piece);  // the common case: one call per piece
    }
    out += piece;
    index += piece;
    n -= piece;
    skip = 0;
  }
}

void ByteRing::CopyChunkOfList(char* out, const iovec* iov, size_t count,
                               size_t first) {
  size_t at = 0;  // where iov[i] goes, from `out`
  for (size_t i = 0; i < count; ++i) {
    const char* src = static_cast<const char*>(iov[i].iov_base);
    size_t len = iov[i].iov_len;
    if (len == 0) continue;  // its base may be null
    if (at >= first) {
      memcpy(out + at, src, len);
    } else if (at + len > first) {
      memcpy(out + first, src + (first - at), at + len - first);
    }
    at += len;
  }
  PublishAfterCopies();
  at = 0;
  for (size_t i = 0; at < first; ++i) {
    size_t len = std::min(iov[i].iov_len, first - at);
    if (len > 0) memcpy(out + at, iov[i].iov_base, len);
    at += len;
  }
}

void ByteRing::Demote(uint64_t index, size_t n) const {
  size_t offset = index & (capacity_ - 1);
  size_t first = std::min<size_t>(n, capacity_ - offset);
  DemoteToSharedCache(data_ + offset, first);
  if (first < n) DemoteToSharedCache(data_, n - first);  // wrapped
}

void ByteRing::CopyOut(uint64_t index, char* dst, size_t n) const {
  size_t offset = index & (capacity_ - 1);
  size_t first = std::min<size_t>(n, capacity_ - offset);
  memcpy(dst, data_ + offset, first);
  if (first < n) memcpy(dst + first, data_, n - first);  // wrapped
}

size_t ByteRing::Write(const iovec* iov, size_t count, size_t skip) {
  uint64_t tail = tail_;
  uint64_t wanted = 0;
  for (size_t i = 0; i < count; ++i) wanted += iov[i].iov_len;
  wanted = wanted > skip ? wanted - skip : 0;
  if (wanted == 0) return 0;
  // The consumer's index moves on every read, so loading it costs a cache
  // miss; the last value seen is enough while it leaves room.
  uint64_t fits = ChunkBytesIn(capacity_ - Used(seen_head_, tail));
  if (fits < wanted && !corrupt_) {
    // Acquire: the consumer's copies out of the bytes it freed come before
    // our overwriting them.
    seen_head_ = header_->head.load(std::memory_order_acquire);
    Acquired(sync_);
    fits = ChunkBytesIn(capacity_ - Used(seen_head_, tail));
  }
  if (corrupt_ || fits == 0) return 0;
  const uint64_t written = std::min(wanted, fits);
  const uint64_t start = tail + sizeof(uint64_t);  // after the control word
  const uint64_t next = start + Padded(written);
  // The bytes that share the control word's cache line, which the consumer
  // polls, go last, right before the word: each store to that line while
  // it polls costs the line a trip back and forth. (Copied in order, the
  // chunks took 0.77 us where a tail index took 0.69; in this order 0.66
  // against 0.70: fi_pingpong shm rdm 64 B, 9 alternating rounds each.)
  const uint64_t line_end = (tail | 63) + 1;
  const uint64_t in_first_line = std::min(written, line_end - start);
  const size_t offset = start & (capacity_ - 1);
  if (skip == 0 && written == wanted && written <= capacity_ - offset) {
    // The common case: all of the list, not wrapped. One walk.
    CopyChunkOfList(data_ + offset, iov, count, in_first_line);
  } else {
    CopyIn(start + in_first_line, iov, count, skip + in_first_line,
           written - in_first_line);
    PublishAfterCopies();
    CopyIn(start, iov, count, skip, in_first_line);
  }
  ControlAt(next).store(0, std::memory_order_relaxed);
  // Release: the bytes and the next zero word are in place before the
  // consumer can see the chunk.
  Released(sync_);
  ControlAt(tail).store((kChunkMagic << 32) | written,
                        std::memory_order_release);
  tail_ = next;
  header_->tail.store(next, std::memory_order_release);
  if (next - tail <= kDemoteMax) Demote(tail, next - tail);
  return written;
}

bool ByteRing::EnterChunk() {
  uint64_t word = ControlAt(head_).load(std::memory_order_acquire);
  if (word == 0 || corrupt_) return false;
  // Acquire: pairs with Write's release, so the bytes are there.
  Acquired(sync_);
  uint64_t length = word & 0xffffffffu;
  if ((word >> 32) != kChunkMagic || length == 0 ||
      length > ChunkBytesIn(capacity_)) {
    FABRIC_LOG_WARN(
        nullptr, FI_LOG_EP_DATA, "shm ring corrupt: control word %#lx at %lu\n",
        static_cast<unsigned long>(word), static_cast<unsigned long>(head_));
    corrupt_ = true;
    return false;
  }
  head_ += sizeof(uint64_t);
  left_ = length;
  return true;
}

void ByteRing::Advance(size_t n) {
  head_ += n;
  left_ -= n;
  // Past the padding too: chunks start on kChunkAlign boundaries.
  if (left_ == 0) head_ = Padded(head_);
  // Release: our reads of the bytes are done before the producer may
  // reuse the space.
  Released(sync_);
  header_->head.store(head_, std::memory_order_release);
}

size_t ByteRing::Read(const iovec* iov, size_t count) {
  uint64_t read = 0;
  size_t i = 0;
  size_t used_of_iov = 0;  // bytes of iov[i] already filled
  while (i < count) {
    if (used_of_iov == iov[i].iov_len) {
      ++i;
      used_of_iov = 0;
      continue;
    }
    if (left_ == 0 && !EnterChunk()) break;
    size_t n = std::min<uint64_t>(iov[i].iov_len - used_of_iov, left_);
    CopyOut(head_, static_cast<char*>(iov[i].iov_base) + used_of_iov, n);
    used_of_iov += n;
    read += n;
    Advance(n);
  }
  return corrupt_ ? 0 : read;
}

const char* ByteRing::Peek(size_t* length) {
  *length = 0;
  if (left_ == 0 && !EnterChunk()) return corrupt_ ? nullptr : data_;
  size_t offset = head_ & (capacity_ - 1);
  *length = static_cast<size_t>(std::min<uint64_t>(left_, capacity_ - offset));
  return data_ + offset;
}

void ByteRing::Consume(size_t n) {
  // At most what Peek lent: the rest of the chunk.
  n = static_cast<size_t>(std::min<uint64_t>(n, left_));
  if (n != 0) Advance(n);
}

size_t ByteRing::Writable() const {
  uint64_t head = header_->head.load(std::memory_order_acquire);
  uint64_t used = Used(head, tail_);
  return corrupt_ ? 0 : ChunkBytesIn(capacity_ - used);
}

void ByteRing::CloseWriter() {
  header_->writer_closed.store(1, std::memory_order_release);
}

void ByteRing::CloseReader() {
  header_->reader_closed.store(1, std::memory_order_release);
}

bool ByteRing::reader_closed() const {
  return header_->reader_closed.load(std::memory_order_acquire) != 0;
}

}  // namespace shm
}  // namespace fabric

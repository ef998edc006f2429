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

// Holds back the store of the tail index until the copies before it have
// executed (LFENCE). Otherwise the CPU asks for the tail's cache line as
// soon as it sees that store, while the bytes' stores still wait to be
// written: the consumer, which polls that line, takes it back and forth
// with the producer meanwhile, and sees the new tail later. With the
// fence the line moves once. fi_pingpong shm rdm 64 B, 7 alternating
// rounds: 0.474 -> 0.419 us (a pause or an rdtsc there did the same; a
// plain store before the tail did not).
void PublishAfterCopies() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_lfence();
#endif
}

bool IsPowerOfTwo(uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

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
  if (!IsPowerOfTwo(capacity)) {
    return FiError(FI_EINVAL, absl::StrCat("ring capacity ", capacity,
                                           " is not a power of two"));
  }
  auto* header = new (mem) RingHeader{};
  header->capacity.store(capacity, std::memory_order_relaxed);
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
  if (!IsPowerOfTwo(capacity) || capacity > mem_size - sizeof(RingHeader)) {
    return FiError(FI_EINVAL, absl::StrCat("ring capacity ", capacity, " in ",
                                           mem_size, " bytes"));
  }
  uint64_t head = header->head.load(std::memory_order_acquire);
  uint64_t tail = header->tail.load(std::memory_order_acquire);
  if (tail - head > capacity) {
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
  // The consumer's index moves on every read, so loading it costs a cache
  // miss; the last value seen is enough while it leaves room.
  uint64_t room = capacity_ - Used(seen_head_, tail);
  if (room < wanted && !corrupt_) {
    // Acquire: the consumer's copies out of the bytes it freed come before
    // our overwriting them.
    seen_head_ = header_->head.load(std::memory_order_acquire);
    Acquired(sync_);
    room = capacity_ - Used(seen_head_, tail);
  }
  if (corrupt_) return 0;
  uint64_t written = 0;
  size_t offset = tail & (capacity_ - 1);
  if (skip == 0 && wanted <= room && wanted <= capacity_ - offset) {
    // All of it, without wrapping (a message's header and payload, most
    // often): copies one after the other.
    char* out = data_ + offset;
    for (size_t i = 0; i < count; ++i) {
      if (iov[i].iov_len == 0) continue;  // an empty iovec may have no base
      memcpy(out, iov[i].iov_base, iov[i].iov_len);
      out += iov[i].iov_len;
    }
    written = wanted;
  } else {
    for (size_t i = 0; i < count && written < room; ++i) {
      size_t len = iov[i].iov_len;
      if (skip >= len) {
        skip -= len;
        continue;
      }
      size_t n = std::min<uint64_t>(len - skip, room - written);
      CopyIn(tail + written, static_cast<const char*>(iov[i].iov_base) + skip,
             n);
      skip = 0;
      written += n;
    }
  }
  // Release: the bytes are in place before the consumer can see them.
  if (written != 0) {
    Released(sync_);
    PublishAfterCopies();
    tail_ = tail + written;
    header_->tail.store(tail_, std::memory_order_release);
    if (written <= kDemoteMax) Demote(tail, written);
  }
  return written;
}

size_t ByteRing::Read(const iovec* iov, size_t count) {
  uint64_t head = head_;
  // Acquire: pairs with Write's release, so the bytes are there.
  uint64_t tail = header_->tail.load(std::memory_order_acquire);
  Acquired(sync_);
  uint64_t available = Used(head, tail);
  if (corrupt_) return 0;
  uint64_t read = 0;
  for (size_t i = 0; i < count && read < available; ++i) {
    size_t n = std::min<uint64_t>(iov[i].iov_len, available - read);
    if (n == 0) continue;  // an empty iovec may have no base
    CopyOut(head + read, static_cast<char*>(iov[i].iov_base), n);
    read += n;
  }
  Consume(read);
  return read;
}

const char* ByteRing::Peek(size_t* length) {
  // Acquire: pairs with Write's release, so the bytes are there.
  uint64_t tail = header_->tail.load(std::memory_order_acquire);
  Acquired(sync_);
  uint64_t available = Used(head_, tail);
  size_t offset = head_ & (capacity_ - 1);
  *length = static_cast<size_t>(std::min<uint64_t>(available,
                                                   capacity_ - offset));
  return corrupt_ ? nullptr : data_ + offset;
}

void ByteRing::Consume(size_t n) {
  if (n == 0) return;
  // Release: our reads of the bytes are done before the producer may
  // reuse the space.
  Released(sync_);
  head_ += n;
  header_->head.store(head_, std::memory_order_release);
}

size_t ByteRing::Writable() const {
  uint64_t head = header_->head.load(std::memory_order_acquire);
  uint64_t used = Used(head, tail_);
  return corrupt_ ? 0 : capacity_ - used;
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

#include "fabric/providers/shm/shm_ring_stream.h"

#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

#include <utility>

#include "fabric/providers/shm/shm_process.h"

namespace fabric {
namespace shm {

RingStream::RingStream(Segment segment, ConnectionArea* area, ByteRing in,
                       ByteRing out, int out_index, const Doorbell* doorbell,
                       std::string peer_doorbell)
    : segment_(std::move(segment)),
      area_(area),
      in_(in),
      out_(out),
      out_index_(out_index),
      in_index_(1 - out_index),
      doorbell_(doorbell),
      peer_doorbell_(std::move(peer_doorbell)) {}

RingStream::~RingStream() { Shutdown(); }

void RingStream::WakePeerIf(std::atomic<uint32_t>& flag) {
  // Pairs with the fence in PrepareToSleep: either the peer sees what was
  // just published, or this sees its flag.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (flag.load(std::memory_order_relaxed) != 0 && flag.exchange(0) != 0) {
    doorbell_->Ring(peer_doorbell_);
  }
}

ssize_t RingStream::Write(const iovec* iov, size_t count) {
  if (out_.reader_closed()) return -EPIPE;
  size_t n = out_.Write(iov, count, 0);
  if (n == 0) return out_.corrupt() ? -EIO : -EAGAIN;
  WakePeerIf(area_->sleeping[out_index_]);
  return static_cast<ssize_t>(n);
}

ssize_t RingStream::Read(const iovec* iov, size_t count) {
  size_t n = in_.Read(iov, count);
  if (n > 0) {
    WakePeerIf(area_->backlogged[in_index_]);
    return static_cast<ssize_t>(n);
  }
  if (in_.corrupt()) return -EIO;
  if (in_.AtEnd()) return 0;
  return -EAGAIN;
}

const char* RingStream::Peek(size_t* length) {
  const char* bytes = in_.Peek(length);
  if (*length == 0 && in_.writer_closed()) return nullptr;
  return bytes;
}

void RingStream::Consume(size_t n) {
  in_.Consume(n);
  WakePeerIf(area_->backlogged[in_index_]);
}

void RingStream::Shutdown() {
  out_.CloseWriter();
  in_.CloseReader();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  doorbell_->Ring(peer_doorbell_);
}

bool RingStream::PeerCanPull() const {
  return area_->can_pull[in_index_].load(std::memory_order_acquire) != 0;
}

ssize_t RingStream::Pull(const iovec* to, size_t to_count, const iovec* from,
                         size_t from_count) {
  ssize_t n = process_vm_readv(peer_pid_, to, to_count, from, from_count, 0);
  return n < 0 ? -errno : n;
}

ssize_t RingStream::Push(const iovec* from, size_t from_count, const iovec* to,
                         size_t to_count) {
  ssize_t n = process_vm_writev(peer_pid_, from, from_count, to, to_count, 0);
  return n < 0 ? -errno : n;
}

bool RingStream::PeerAlive() const {
  // A process that exited (a zombie too) has no memory left to read.
  int peer = in_index_;
  uint64_t word = 0;
  iovec local = {&word, sizeof(word)};
  iovec remote = {reinterpret_cast<void*>(area_->probe_address[peer]),
                  sizeof(word)};
  return peer_pid_ > 0 &&
         process_vm_readv(peer_pid_, &local, 1, &remote, 1, 0) ==
             static_cast<ssize_t>(sizeof(word));
}

void RingStream::OfferProbe() {
  int side = out_index_;
  static std::atomic<uint64_t> salt{0};
  area_->pid[side] = getpid();
  absl::StatusOr<uint64_t> pid_ns = OwnPidNamespace();
  area_->pid_ns[side] = pid_ns.ok() ? *pid_ns : 0;
  area_->probe_word[side] =
      (static_cast<uint64_t>(getpid()) << 32) ^ 0x5eed0000u ^ ++salt;
  area_->probe_address[side] =
      reinterpret_cast<uint64_t>(&area_->probe_word[side]);
}

void RingStream::ProbePeer(bool allowed) {
  int peer = in_index_;
  pid_t pid = area_->pid[peer];
  uint64_t expected = area_->probe_word[peer];
  absl::StatusOr<uint64_t> own_ns = OwnPidNamespace();
  bool readable = false;
  if (allowed && pid > 0 && own_ns.ok() && area_->pid_ns[peer] == *own_ns) {
    uint64_t word = 0;
    iovec local = {&word, sizeof(word)};
    iovec remote = {reinterpret_cast<void*>(area_->probe_address[peer]),
                    sizeof(word)};
    readable = process_vm_readv(pid, &local, 1, &remote, 1, 0) ==
                   static_cast<ssize_t>(sizeof(word)) &&
               word == expected;
  }
  peer_pid_ = readable ? pid : 0;
  area_->can_pull[out_index_].store(readable ? 1 : 0,
                                    std::memory_order_release);
}

bool RingStream::PrepareToSleep(bool want_room) {
  area_->sleeping[in_index_].store(1, std::memory_order_relaxed);
  if (want_room) area_->backlogged[out_index_].store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (HasInput()) return false;
  return !(want_room && out_.Writable() > 0);
}

}  // namespace shm
}  // namespace fabric

#include "fabric/providers/shm/shm_ring_stream.h"

#include <errno.h>

#include <utility>

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

void RingStream::Shutdown() {
  out_.CloseWriter();
  in_.CloseReader();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  doorbell_->Ring(peer_doorbell_);
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

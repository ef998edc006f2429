#include "fabric/providers/stream/shared_copy.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <sched.h>

#include <algorithm>

#include "fabric/api/config/log.h"
#include "fabric/providers/util/cpu_relax.h"

namespace fabric {
namespace stream {
namespace {

// How long Finish(spin) waits for the sender's chunks: about ten chunk
// copies. Longer, and the message waits for the next progress pass.
constexpr auto kSpinBudget = std::chrono::microseconds(200);
// How often a receiver still waiting checks that the sender is alive.
constexpr auto kAliveCheckInterval = std::chrono::milliseconds(1);
// How long Abandon waits for a live sender's chunks.
constexpr auto kAbandonWait = std::chrono::seconds(1);
// The pieces of one chunk's copy (process_vm_readv takes up to IOV_MAX).
constexpr size_t kMaxChunkPieces = 64;

// Claims the next chunk of `job` (of `chunks`) in `share`: its index, or
// -1 when the job is not the current one or none is left.
int64_t ClaimChunk(CopyShare* share, uint32_t job, uint64_t chunks) {
  uint64_t word = share->claim.load(std::memory_order_acquire);
  while ((word >> 32) == job && (word & 0xffffffffu) < chunks) {
    if (share->claim.compare_exchange_weak(word, word + 1,
                                           std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
      return static_cast<int64_t>(word & 0xffffffffu);
    }
  }
  return -1;
}

uint64_t ChunksOf(uint64_t bytes) {
  return (bytes + kAssistChunk - 1) / kAssistChunk;
}

}  // namespace

void SliceIov(const iovec* iov, size_t count, size_t offset, size_t limit,
              size_t max_pieces, std::vector<iovec>* out) {
  for (size_t i = 0; i < count && limit > 0 && out->size() < max_pieces;
       ++i) {
    if (offset >= iov[i].iov_len) {
      offset -= iov[i].iov_len;
      continue;
    }
    size_t len = std::min(iov[i].iov_len - offset, limit);
    out->push_back({static_cast<char*>(iov[i].iov_base) + offset, len});
    limit -= len;
    offset = 0;
  }
}

SharedCopy::SharedCopy(ByteStream* stream, uint32_t job,
                       std::vector<iovec> local, const iovec* remote,
                       size_t remote_count, uint64_t want)
    : stream_(stream),
      share_(stream->IncomingShare()),
      job_(job),
      local_(std::move(local)),
      remote_count_(std::min<size_t>(remote_count, kMaxRmaCount)),
      want_(want),
      chunks_(ChunksOf(want)),
      mine_(chunks_, false) {
  std::copy(remote, remote + remote_count_, remote_);
  share_->sender_done.store(0, std::memory_order_relaxed);
  share_->sender_failed.store(0, std::memory_order_relaxed);
  // Release: a sender that sees the job sees the counters reset.
  share_->claim.store(uint64_t{job_} << 32, std::memory_order_release);
}

int SharedCopy::CopyChunk(uint64_t c) {
  uint64_t offset = c * kAssistChunk;
  uint64_t len = std::min(kAssistChunk, want_ - offset);
  to_.clear();
  from_.clear();
  SliceIov(local_.data(), local_.size(), offset, len, kMaxChunkPieces, &to_);
  SliceIov(remote_, remote_count_, offset, len, kMaxChunkPieces, &from_);
  ssize_t n = stream_->Pull(to_.data(), to_.size(), from_.data(),
                            from_.size());
  if (n == static_cast<ssize_t>(len)) return 0;
  // ESRCH: the sender's process is gone; EFAULT or short: it named memory
  // it does not have.
  if (n == -ESRCH) return -FI_ECONNRESET;
  if (n < 0 && n != -EFAULT) return static_cast<int>(n);
  return -FI_EIO;
}

void SharedCopy::CopyOwnChunks() {
  for (int64_t c; error_ == 0 && (c = ClaimChunk(share_, job_, chunks_)) >= 0;) {
    error_ = CopyChunk(static_cast<uint64_t>(c));
    mine_[c] = true;
    ++own_;
  }
  // Whatever is unclaimed now stays so (a failed copy stops the job).
  claimed_ = share_->claim.exchange(uint64_t{job_} << 32 | chunks_,
                                    std::memory_order_acq_rel) &
             0xffffffffu;
  next_alive_check_ = std::chrono::steady_clock::now() + kAliveCheckInterval;
}

bool SharedCopy::SenderDone() const {
  return share_->sender_done.load(std::memory_order_acquire) >=
         claimed_ - own_;
}

int SharedCopy::Finish(bool spin) {
  if (!SenderDone()) {
    auto now = std::chrono::steady_clock::now();
    if (spin) {
      auto deadline = now + kSpinBudget;
      for (int i = 1; !SenderDone(); ++i) {
        CpuRelax();
        if (i % 256 == 0 && std::chrono::steady_clock::now() >= deadline) {
          break;
        }
      }
      now = std::chrono::steady_clock::now();
    }
    if (!SenderDone()) {
      // It may have died holding a chunk, or stopped (a debugger): the
      // application's call returns, and the message waits meanwhile.
      if (now >= next_alive_check_) {
        if (!stream_->PeerAlive()) return -FI_ECONNRESET;
        next_alive_check_ = now + kAliveCheckInterval;
      }
      return -FI_EAGAIN;
    }
  }
  if (error_ != 0) return error_;
  for (uint64_t c = claimed_; c < chunks_; ++c) {  // left when a copy failed
    if (int error = CopyChunk(c); error != 0) return error;
  }
  if (share_->sender_failed.load(std::memory_order_acquire) != 0) {
    for (uint64_t c = 0; c < claimed_; ++c) {
      if (mine_[c]) continue;
      if (int error = CopyChunk(c); error != 0) return error;
    }
  }
  FABRIC_LOG_DEBUG(nullptr, FI_LOG_EP_DATA,
                   "shared copy of %lu bytes: %lu of %lu chunks by the "
                   "sender\n",
                   static_cast<unsigned long>(want_),
                   static_cast<unsigned long>(sender_chunks()),
                   static_cast<unsigned long>(chunks_));
  return 0;
}

void SharedCopy::Abandon() {
  auto deadline = std::chrono::steady_clock::now() + kAbandonWait;
  while (!SenderDone()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      FABRIC_LOG_WARN(nullptr, FI_LOG_EP_DATA,
                      "closing during a shared copy whose sender still "
                      "writes (stopped?): its buffer is given back anyway\n");
      return;
    }
    if (!stream_->PeerAlive()) return;
    sched_yield();
  }
}

uint64_t HelpCopy(ByteStream* stream, uint32_t job, const iovec* from,
                  size_t from_count, const iovec* to, size_t to_count,
                  uint64_t want) {
  CopyShare* share = stream->OutgoingShare();
  uint64_t chunks = ChunksOf(want);
  uint64_t copied = 0;
  std::vector<iovec> source, target;
  for (int64_t c; (c = ClaimChunk(share, job, chunks)) >= 0;) {
    uint64_t offset = static_cast<uint64_t>(c) * kAssistChunk;
    uint64_t len = std::min(kAssistChunk, want - offset);
    source.clear();
    target.clear();
    SliceIov(from, from_count, offset, len, kMaxChunkPieces, &source);
    SliceIov(to, to_count, offset, len, kMaxChunkPieces, &target);
    ssize_t n = stream->Push(source.data(), source.size(), target.data(),
                             target.size());
    if (n != static_cast<ssize_t>(len)) {
      share->sender_failed.store(1, std::memory_order_relaxed);
    }
    // Release: the bytes (or the failure) before the count.
    share->sender_done.fetch_add(1, std::memory_order_release);
    ++copied;
  }
  return copied;
}

}  // namespace stream
}  // namespace fabric

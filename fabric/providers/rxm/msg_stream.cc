#include "fabric/providers/rxm/msg_stream.h"

#include <errno.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/cq.h"

namespace fabric {
namespace rxm {

StreamBuffers::~StreamBuffers() {
  if (mr != nullptr) fi_close(&mr->fid);
}

absl::StatusOr<std::unique_ptr<MsgStream>> MsgStream::Open(
    fid_domain* domain, fid_ep* ep, bool register_buffers,
    RetiredBuffers* retired, const RmaReads* reads, size_t inject_size) {
  auto buffers = std::make_unique<StreamBuffers>();
  const size_t count = kRxBuffers + kTxBuffers;
  buffers->memory = std::make_unique<char[]>(count * kBufferSize);
  if (register_buffers) {
    int rc = fi_mr_reg(domain, buffers->memory.get(), count * kBufferSize,
                       FI_SEND | FI_RECV, 0, 0, 0, &buffers->mr, nullptr);
    if (rc != 0) {
      fi_close(&ep->fid);
      return FiError(-rc, absl::StrCat("registering a stream's buffers: ",
                                       fi_strerror(-rc)));
    }
    buffers->desc = fi_mr_desc(buffers->mr);
  }
  buffers->buffers.resize(count);
  for (size_t i = 0; i < count; ++i) {
    StreamBuffer& buffer = buffers->buffers[i];
    buffer.owner = buffers.get();
    buffer.data = buffers->memory.get() + i * kBufferSize;
    buffer.kind = i < kRxBuffers ? StreamBuffer::kReceive
                                 : StreamBuffer::kSend;
  }
  StreamBuffers* raw = buffers.get();
  std::unique_ptr<MsgStream> stream(
      new MsgStream(domain, ep, std::move(buffers), retired));
  raw->stream = stream.get();
  stream->register_buffers_ = register_buffers;
  if (reads != nullptr) stream->reads_ = *reads;
  stream->inject_size_ = inject_size;
  if (fi_control(&ep->fid, kControlGetCqDirectProducer,
                 &stream->direct_producer_) != 0) {
    stream->direct_producer_ = nullptr;
  }
  for (size_t i = 0; i < count; ++i) {
    StreamBuffer* buffer = &raw->buffers[i];
    if (buffer->kind == StreamBuffer::kSend) {
      stream->free_tx_.push_back(buffer);
      continue;
    }
    if (int rc = stream->PostReceive(buffer); rc != 0) {
      return FiError(-rc, absl::StrCat("posting a stream's receives: ",
                                       fi_strerror(-rc)));
    }
  }
  return stream;
}

MsgStream::~MsgStream() {
  // No completion comes after the endpoint is closed; those already in the
  // owner's CQ find their buffers retired.
  fi_close(&ep_->fid);
  buffers_->stream = nullptr;
  retired_->push_back(std::move(buffers_));
}

int MsgStream::PostReceive(StreamBuffer* buffer) {
  buffer->length = 0;
  buffer->offset = 0;
  int rc = static_cast<int>(fi_recv(ep_, buffer->data, kBufferSize,
                                    buffers_->desc, FI_ADDR_UNSPEC,
                                    &buffer->context));
  if (rc == 0) ++posted_rx_;
  return rc;
}

void MsgStream::OnPeerShutdown() {
  peer_shutdown_ = true;
  if (posted_rx_ == 0) OnEnded(0);
}

ssize_t MsgStream::Write(const iovec* iov, size_t count) {
  if (ended_) return error_ != 0 ? -error_ : -EPIPE;
  if (!connected_) return -EAGAIN;
  size_t written = 0;
  size_t piece = 0;
  size_t piece_offset = 0;
  while (piece < count && !free_tx_.empty()) {
    const size_t unconfirmed = (kTxBuffers - free_tx_.size()) +
                               static_cast<size_t>(injected_ -
                                                   confirmed_injects_);
    if (unconfirmed >= kTxBuffers) break;
    StreamBuffer* buffer = free_tx_.back();
    size_t filled = 0;
    while (piece < count && filled < kBufferSize) {
      size_t n = std::min(iov[piece].iov_len - piece_offset,
                          kBufferSize - filled);
      memcpy(buffer->data + filled,
             static_cast<const char*>(iov[piece].iov_base) + piece_offset, n);
      filled += n;
      piece_offset += n;
      if (piece_offset == iov[piece].iov_len) {
        ++piece;
        piece_offset = 0;
      }
    }
    if (filled == 0) break;  // only empty pieces were left
    // An inject leaves room for a send, whose completion confirms it.
    const bool inject = filled <= inject_size_ && unconfirmed + 1 < kTxBuffers;
    ssize_t rc = inject ? fi_inject(ep_, buffer->data, filled, FI_ADDR_UNSPEC)
                        : fi_send(ep_, buffer->data, filled, buffers_->desc,
                                  FI_ADDR_UNSPEC, &buffer->context);
    if (rc == -FI_EAGAIN) break;  // the bytes stay unwritten
    if (rc != 0) {
      OnEnded(static_cast<int>(-rc));
      return written > 0 ? static_cast<ssize_t>(written) : rc;
    }
    if (inject) {
      ++injected_;  // the buffer is free again at once
    } else {
      buffer->injects_before = injected_;
      free_tx_.pop_back();
    }
    written += filled;
  }
  return written > 0 ? static_cast<ssize_t>(written) : -EAGAIN;
}

void MsgStream::ConfirmInjects() {
  if (confirmed_injects_ == injected_ || ended_ || free_tx_.empty()) return;
  StreamBuffer* buffer = free_tx_.back();
  ssize_t rc = fi_send(ep_, buffer->data, 0, buffers_->desc, FI_ADDR_UNSPEC,
                       &buffer->context);
  if (rc == -FI_EAGAIN) return;  // a full queue: the owner asks again
  if (rc != 0) {
    OnEnded(static_cast<int>(-rc));
    return;
  }
  buffer->injects_before = injected_;
  free_tx_.pop_back();
}

ssize_t MsgStream::Read(const iovec* iov, size_t count) {
  size_t read = 0;
  for (size_t piece = 0; piece < count; ++piece) {
    char* to = static_cast<char*>(iov[piece].iov_base);
    size_t done = 0;
    while (done < iov[piece].iov_len) {
      size_t available = 0;
      const char* bytes = Peek(&available);
      if (available == 0) break;
      const size_t n = std::min(iov[piece].iov_len - done, available);
      memcpy(to + done, bytes, n);
      Consume(n);
      done += n;
    }
    read += done;
    if (done < iov[piece].iov_len) break;
  }
  if (read > 0) return static_cast<ssize_t>(read);
  if (!ended_) return -EAGAIN;
  return error_ != 0 ? -error_ : 0;
}

const char* MsgStream::Peek(size_t* length) {
  if (!arrived_.empty()) {
    const StreamBuffer* buffer = arrived_.front();
    *length = buffer->length - buffer->offset;
    return buffer->data + buffer->offset;
  }
  // After the buffers: what was spilled came after them.
  if (!spilled_.empty()) {
    *length = spilled_.front().size() - spilled_offset_;
    return spilled_.front().data() + spilled_offset_;
  }
  *length = 0;
  // At the end, Read reports it (and its error).
  return ended_ ? nullptr : buffers_->memory.get();
}

void MsgStream::Consume(size_t n) {
  if (!arrived_.empty()) {
    StreamBuffer* buffer = arrived_.front();
    buffer->offset += n;
    if (buffer->offset < buffer->length) return;
    // Read to its end: posted again for the peer's next messages.
    arrived_.pop_front();
    if (!ended_ && !peer_shutdown_) {
      if (int rc = PostReceive(buffer); rc != 0) OnEnded(-rc);
    }
    return;
  }
  spilled_offset_ += n;
  if (spilled_offset_ == spilled_.front().size()) {
    spilled_.pop_front();
    spilled_offset_ = 0;
  }
}

void MsgStream::Shutdown() {
  if (!ended_ && connected_) fi_shutdown(ep_, 0);
  OnEnded(0);
}

void MsgStream::OnEnded(int err) {
  if (ended_) return;
  ended_ = true;
  error_ = err;
}

void MsgStream::DispatchCompletion(void* op_context, size_t len) {
  auto* buffer = static_cast<StreamBuffer*>(op_context);
  if (buffer == nullptr) return;  // an inject's: nothing to hand back
  MsgStream* stream = buffer->owner->stream;
  if (stream == nullptr) return;  // closed meanwhile
  if (buffer->kind == StreamBuffer::kRead) {
    --stream->reads_out_;
    return;
  }
  if (buffer->kind == StreamBuffer::kSend) {
    stream->confirmed_injects_ =
        std::max(stream->confirmed_injects_, buffer->injects_before);
    stream->free_tx_.push_back(buffer);
    return;
  }
  --stream->posted_rx_;
  if (len > 0 && (stream->pulling_ || !stream->spilled_.empty())) {
    stream->spilled_.emplace_back(buffer->data, len);
    len = 0;  // the buffer is free again at once
  }
  if (len > 0) {
    buffer->length = len;
    buffer->offset = 0;
    stream->arrived_.push_back(buffer);
  } else if (!stream->ended_ && !stream->peer_shutdown_) {
    stream->PostReceive(buffer);  // nothing to read: back at once
  }
  if (stream->peer_shutdown_ && stream->posted_rx_ == 0) stream->OnEnded(0);
}

void MsgStream::DispatchError(void* op_context, int err) {
  auto* buffer = static_cast<StreamBuffer*>(op_context);
  // An inject that failed (a provider reports it with no context): the
  // connection is broken, and its flushed receives end the stream.
  if (buffer == nullptr) return;
  MsgStream* stream = buffer->owner->stream;
  if (stream == nullptr) return;
  if (buffer->kind == StreamBuffer::kRead) {
    --stream->reads_out_;
    stream->read_error_ = err;  // the Pull fails; the connection ends
    return;
  }
  if (buffer->kind == StreamBuffer::kSend) {
    stream->free_tx_.push_back(buffer);
    stream->OnEnded(err);  // bytes written were lost
    return;
  }
  // Receives are flushed when the connection ends, whichever side ended
  // it: the end of the stream, after what arrived.
  --stream->posted_rx_;
  stream->OnEnded(err == FI_ECANCELED || err == FI_ECONNRESET ? 0 : err);
}

}  // namespace rxm
}  // namespace fabric

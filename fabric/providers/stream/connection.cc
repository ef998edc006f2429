#include "fabric/providers/stream/connection.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>

#include "fabric/providers/stream/shared_copy.h"

namespace fabric {
namespace stream {
namespace {

constexpr size_t kStagingSize = 64 * 1024;
// Payloads at least this long skip the staging buffer.
constexpr size_t kDirectReadMin = 16 * 1024;
// A payload from which on the next header is read alone (header_alone_):
// below it, one staging read and a copy cost less than a second read
// (fi_pingpong tcp msg, pinned: 16 KiB 6.42 -> 6.82 us with it, 64 KiB
// 14.42 -> 14.00).
constexpr size_t kHeaderAloneMin = 48 * 1024;
constexpr int kMaxIov = 64;
// Payloads at least this long are copied by both sides (StartSharedCopy): two
// chunks, one each.
constexpr uint64_t kSharedCopyMin = 2 * kAssistChunk;

int ErrnoToFi(int err) {
  return err == EPIPE ? FI_ECONNRESET : err;
}

// Whether `header` leaves its payload in the sender until a kAck answers
// it: a message that asks for one, or a write (always answered).
bool AwaitsAckForPayload(const Header& header) {
  return (header.flags & kPayloadInSender) != 0 &&
         ((header.flags & kAckRequested) != 0 ||
          header.op == static_cast<uint8_t>(Op::kWrite));
}

// A read's data left in the target's memory (answered by nobody).
bool IsReadDataInSender(const Header& header) {
  return (header.flags & kPayloadInSender) != 0 &&
         header.op == static_cast<uint8_t>(Op::kReadResponse);
}

// The reads' data a connection keeps lent for a helping copy at most.
constexpr size_t kMaxLentReads = 16;

// The memory `count` RMA descriptors name, as iovecs in `out`.
void IovOfDescriptors(const RmaDescriptor* descriptors, size_t count,
                      iovec* out) {
  for (size_t i = 0; i < count; ++i) {
    out[i] = {reinterpret_cast<void*>(descriptors[i].addr),
              descriptors[i].len};
  }
}

// The connection's error for a copy of the peer's payload that returned
// `n` (bytes, or -errno) instead of all it wanted. ESRCH: the sender's
// process is gone, as a reset connection says; EFAULT or a short copy: it
// named memory it does not have.
int PullError(ssize_t n) {
  if (n == -ESRCH) return -FI_ECONNRESET;
  if (n < 0 && n != -EFAULT) return -ErrnoToFi(static_cast<int>(-n));
  return -FI_EIO;
}

// SliceIov of at most kMaxIov pieces.
void SliceIov(const iovec* iov, size_t count, size_t offset, size_t limit,
              std::vector<iovec>* out) {
  stream::SliceIov(iov, count, offset, limit, kMaxIov, out);
}

}  // namespace

void TxEntry::Reset() {
  std::vector<iovec> kept_payload = std::move(payload);
  std::vector<char> kept_owned = std::move(owned);
  std::vector<iovec> kept_read_iov = std::move(read_iov);
  *this = TxEntry();
  kept_payload.clear();
  kept_owned.clear();
  kept_read_iov.clear();
  payload = std::move(kept_payload);
  owned = std::move(kept_owned);
  read_iov = std::move(kept_read_iov);
}

Connection::Connection(std::unique_ptr<ByteStream> stream,
                       ConnectionHandler* handler, const HmemCopier* copier)
    : stream_(std::move(stream)),
      handler_(handler),
      copier_(copier),
      staging_(new char[kStagingSize]) {}

Connection::~Connection() { AbandonSharedCopy(); }

void Connection::AbandonSharedCopy() {
  // A stream's copy stops with its job (the stream shuts down with the
  // connection, and its device writes no more).
  pull_.reset();
  if (shared_ == nullptr) return;
  shared_->Abandon();
  shared_.reset();
}

void Connection::Send(std::unique_ptr<TxEntry> entry) {
  queue_.push_back(std::move(entry));
  if (queue_.size() == 1 && !closed_ && !held_) Flush();
}

void Connection::Release() {
  held_ = false;
  Progress();
}

void Connection::Progress() {
  if (closed_ || held_) return;
  drained_ = false;
  if (!queue_.empty()) Flush();
  ReadInput();
}

void Connection::Close(int error) {
  if (closed_) return;
  closed_ = true;
  // The receive fails, and its buffer goes back to the application: not
  // while the sender may still write into it.
  AbandonSharedCopy();
  stream_->Shutdown();
  handler_->OnClosed(error);
}

std::deque<std::unique_ptr<TxEntry>> Connection::TakeQueued() {
  return std::move(queue_);
}

void Connection::Flush() {
  std::vector<iovec>& iov = scratch_iov_;
  while (!queue_.empty() && !closed_) {
    TxEntry& entry = *queue_.front();
    iov.clear();
    size_t head = entry.head_size();
    size_t payload_offset = 0;
    if (entry.sent < head) {
      iov.push_back({reinterpret_cast<char*>(&entry.header) + entry.sent,
                     head - entry.sent});
    } else {
      payload_offset = entry.sent - head;
    }
    SliceIov(entry.payload.data(), entry.payload.size(), payload_offset,
             SIZE_MAX, &iov);
    ssize_t n = stream_->Write(iov.data(), iov.size());
    if (n < 0) {
      if (n == -EAGAIN) {
        if (!backlogged_) {
          backlogged_ = true;
          handler_->OnBacklog(true);
        }
        return;
      }
      Close(-ErrnoToFi(static_cast<int>(-n)));
      return;
    }
    entry.sent += n;
    if (entry.sent == entry.wire_size()) {
      // A message's or a write's payload, lent until its kAck; a read's
      // data too, in lent_reads_ by the reader's id (no answer releases
      // it).
      bool read_data = IsReadDataInSender(entry.header);
      if ((read_data || AwaitsAckForPayload(entry.header)) &&
          stream_->OutgoingShare() != nullptr) {
        Lent lent = {entry.header.id,
                     entry.header.size,
                     {},
                     PayloadDescriptorCount(entry.header)};
        IovOfDescriptors(PayloadDescriptors(entry.header, entry.descriptors),
                         lent.count, lent.pieces);
        std::deque<Lent>& list = read_data ? lent_reads_ : lent_;
        list.push_back(lent);
        if (read_data && list.size() > kMaxLentReads) list.pop_front();
      }
      std::unique_ptr<TxEntry> done = std::move(queue_.front());
      queue_.pop_front();
      handler_->OnSent(std::move(done));
    }
  }
  if (backlogged_ && queue_.empty()) {
    backlogged_ = false;
    handler_->OnBacklog(false);
  }
}

bool Connection::RecvIntoStaging() {
  if (drained_) return false;
  if (begin_ == end_) begin_ = end_ = 0;
  if (end_ == kStagingSize) {
    memmove(staging_.get(), staging_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  size_t room = kStagingSize - end_;
  if (header_alone_ && state_ == ReadState::kHeader && begin_ == end_) {
    room = sizeof(Header);
  }
  iovec into = {staging_.get() + end_, room};
  ssize_t n = stream_->Read(&into, 1);
  if (!GotBytes(n)) return false;
  end_ += n;
  drained_ = static_cast<size_t>(n) < room;
  if (state_ == ReadState::kPayload && remaining_ > end_ - begin_) {
    stream_->AcknowledgeNow();
  }
  return true;
}

bool Connection::GotBytes(ssize_t n) {
  if (n > 0) return true;
  if (n == 0) {
    Close(0);
  } else if (n != -EAGAIN) {
    Close(-ErrnoToFi(static_cast<int>(-n)));
  } else {
    drained_ = true;
  }
  return false;
}

bool Connection::Fill(size_t bytes) {
  while (end_ - begin_ < bytes) {
    if (!RecvIntoStaging()) return false;
  }
  return true;
}

bool Connection::CanReadDirect() const {
  return target_.kind == RxTarget::kUser &&
         target_.iface == FI_HMEM_SYSTEM && remaining_ >= kDirectReadMin &&
         placed_ + remaining_ <= target_.capacity &&
         copier_->DirectSystemAccess();
}

bool Connection::ReadDirect() {
  if (drained_) return false;
  std::vector<iovec>& iov = scratch_iov_;
  iov.clear();
  SliceIov(target_.iov, target_.iov_count, placed_, remaining_, &iov);
  size_t want = 0;
  for (const iovec& piece : iov) want += piece.iov_len;
  ssize_t n = stream_->Read(iov.data(), iov.size());
  if (!GotBytes(n)) return false;
  placed_ += n;
  remaining_ -= n;
  drained_ = static_cast<size_t>(n) < want;
  if (remaining_ > 0) stream_->AcknowledgeNow();
  return true;
}

void Connection::Place(const char* data, size_t len) {
  switch (target_.kind) {
    case RxTarget::kUser: {
      size_t room = target_.capacity > placed_ ? target_.capacity - placed_ : 0;
      size_t n = std::min(room, len);
      if (n > 0) {
        ssize_t copied = copier_->CopyToIov(target_.iface, target_.device,
                                            target_.iov, target_.iov_count,
                                            placed_, data, n);
        if (copied < 0) {
          Close(static_cast<int>(copied));
          return;
        }
        placed_ += n;
      }
      break;
    }
    case RxTarget::kBuffer:
      target_.buffer->insert(target_.buffer->end(), data, data + len);
      placed_ += len;
      break;
    default:
      break;
  }
}

bool Connection::PullPayload(const RmaDescriptor* descriptors) {
  // Where the payload lies in the sender's memory.
  const RmaDescriptor* from = PayloadDescriptors(header_, descriptors);
  const uint16_t count = PayloadDescriptorCount(header_);
  if (!stream_->CanPull()) {
    Close(-FI_EIO);  // a peer that cannot be copied from sent one
    return false;
  }
  size_t want = target_.kind == RxTarget::kUser
                    ? std::min<uint64_t>(header_.size, target_.capacity)
                : target_.kind == RxTarget::kBuffer ? header_.size
                                                    : 0;
  if (want == 0) return true;
  iovec remote[kMaxRmaCount];
  IovOfDescriptors(from, count, remote);
  std::vector<iovec>& local = scratch_iov_;
  local.clear();
  std::vector<char> bounce;
  if (target_.kind == RxTarget::kBuffer) {
    size_t old = target_.buffer->size();
    target_.buffer->resize(old + want);
    local.push_back({target_.buffer->data() + old, want});
  } else if (target_.iface == FI_HMEM_SYSTEM &&
             copier_->DirectSystemAccess()) {
    SliceIov(target_.iov, target_.iov_count, 0, want, &local);
  } else {
    bounce.resize(want);  // device memory: the copier places it
    local.push_back({bounce.data(), want});
  }
  if (bounce.empty() && CanPullShared(local, want)) {
    // A copy of the pieces: Send reuses scratch_iov_.
    StartSharedCopy(std::vector<iovec>(local), remote, count, want);
    // Done now, or ReadInput finishes it.
    FinishSharedCopy(/*spin=*/true);
    return !closed_;
  }
  // A stream whose copies take time copies while the connection waits
  // (kAwaitCopy, ReadInput moves it on).
  pull_ = stream_->StartPull(local.data(), local.size(), from, count);
  if (pull_ != nullptr) {
    pull_want_ = want;
    pull_bounce_ = std::move(bounce);
    state_ = ReadState::kAwaitCopy;
    FinishAwaitedCopy(/*spin=*/false);
    return !closed_;
  }
  ssize_t n = stream_->PullFrom(local.data(), local.size(), from, count);
  if (n != static_cast<ssize_t>(want)) {
    Close(PullError(n));
    return false;
  }
  if (!bounce.empty()) {
    Place(bounce.data(), want);
    return !closed_;
  }
  placed_ = want;
  return true;
}

bool Connection::CanPullShared(const std::vector<iovec>& local,
                               uint64_t want) const {
  // Only the sender of a message, a write or a read's data lent its
  // payload and helps copy it.
  return want >= kSharedCopyMin && target_.kind == RxTarget::kUser &&
         (AwaitsAckForPayload(header_) || IsReadDataInSender(header_)) &&
         local.size() <= kMaxRmaCount && stream_->PeerCanPull() &&
         stream_->IncomingShare() != nullptr;
}

void Connection::StartSharedCopy(std::vector<iovec> local,
                                 const iovec* remote, size_t remote_count,
                                 uint64_t want) {
  if (++last_job_ == 0) ++last_job_;
  auto request = std::make_unique<TxEntry>();
  request->header.op = static_cast<uint8_t>(Op::kAssist);
  if (IsReadDataInSender(header_)) request->header.flags = kAssistsReadData;
  request->header.id = header_.id;
  request->header.tag = last_job_;
  request->header.data = want;
  request->header.rma_count = static_cast<uint16_t>(local.size());
  for (size_t i = 0; i < local.size(); ++i) {
    request->descriptors[i] = {reinterpret_cast<uint64_t>(local[i].iov_base),
                               local[i].iov_len, 0};
  }
  request->report = false;
  shared_ = std::make_unique<SharedCopy>(stream_.get(), last_job_,
                                         std::move(local), remote,
                                         remote_count, want);
  Send(std::move(request));  // after the job is published
  shared_->CopyOwnChunks();
  state_ = ReadState::kAwaitCopy;  // until FinishSharedCopy is done
}

bool Connection::Intercept(const RmaDescriptor* descriptors) {
  Op op = static_cast<Op>(header_.op);
  if (op == Op::kAck) {
    // Answered: the receiver copied it, it will not ask for help.
    while (!lent_.empty() && lent_.front().id <= header_.id) lent_.pop_front();
    return false;
  }
  if (op != Op::kAssist) return false;
  bool read_data = (header_.flags & kAssistsReadData) != 0;
  HelpCopy(descriptors, read_data ? &lent_reads_ : &lent_);
  // A read's data is asked for once: it is done with.
  if (read_data && !lent_reads_.empty() &&
      lent_reads_.front().id == header_.id) {
    lent_reads_.pop_front();
  }
  return true;
}

void Connection::HelpCopy(const RmaDescriptor* to, std::deque<Lent>* lent) {
  if (stream_->OutgoingShare() == nullptr) {
    Close(-FI_EIO);  // a stream without shares cannot have asked
    return;
  }
  // Asked in sending order: the older ones will not be.
  while (!lent->empty() && lent->front().id < header_.id) lent->pop_front();
  if (lent->empty() || lent->front().id != header_.id ||
      header_.data > lent->front().size || !stream_->CanPull()) {
    return;  // nothing we lent, or no access: the receiver copies alone
  }
  iovec remote[kMaxRmaCount];
  IovOfDescriptors(to, header_.rma_count, remote);
  const Lent& payload = lent->front();
  stream::HelpCopy(stream_.get(), static_cast<uint32_t>(header_.tag),
                   payload.pieces, payload.count, remote, header_.rma_count,
                   header_.data);
}

bool Connection::FinishAwaitedCopy(bool spin) {
  if (shared_ != nullptr) return FinishSharedCopy(spin);
  ssize_t n = pull_->Finish();
  if (n == -EAGAIN) return false;
  pull_.reset();
  state_ = ReadState::kHeader;
  if (n != static_cast<ssize_t>(pull_want_)) {
    Close(PullError(n));
    return false;
  }
  if (!pull_bounce_.empty()) {
    placed_ = 0;
    Place(pull_bounce_.data(), pull_want_);
    pull_bounce_.clear();
    return !closed_;
  }
  placed_ = pull_want_;
  return true;
}

bool Connection::FinishSharedCopy(bool spin) {
  int rc = shared_->Finish(spin);
  if (rc == -FI_EAGAIN) return false;
  if (rc != 0) {
    Close(rc);
    return false;
  }
  placed_ = shared_->want();
  shared_.reset();
  state_ = ReadState::kHeader;
  return true;
}

void Connection::SetStalled(bool stalled) {
  if (stalled == stalled_) return;
  stalled_ = stalled;
  handler_->OnStalled(stalled);
}

bool Connection::TakeHeader(const char* bytes) {
  memcpy(&header_, bytes, sizeof(Header));
  if (IsPlainMessage(header_)) {
    header_alone_ = header_.size >= kHeaderAloneMin;
    return true;
  }
  if (absl::Status status = CheckHeader(header_); !status.ok()) {
    Close(-FI_EIO);
    return false;
  }
  header_alone_ = (header_.flags & kPayloadInSender) == 0 &&
                  header_.size >= kHeaderAloneMin;
  return true;
}

bool Connection::TakeDescriptors(const char* bytes,
                                 RmaDescriptor* descriptors) {
  if (header_.rma_count == 0) return true;  // nothing to check then
  memcpy(descriptors, bytes, header_.rma_count * sizeof(RmaDescriptor));
  if (!CheckRmaDescriptors(header_, descriptors).ok()) {
    Close(-FI_EIO);
    return false;
  }
  return true;
}

// Inline: the shortest way a message is read runs through it.
inline bool Connection::TookWholeMessage(const char* payload, size_t available,
                                         CqReadBuffer* direct) {
  if (!IsPlainMessage(header_) || header_.size > available ||
      !handler_->TakeWholeMessage(header_, payload, direct)) {
    return false;
  }
  SetStalled(false);
  return true;
}

Connection::Whole Connection::TakeWholeNow(CqReadBuffer* direct) {
  if (closed_ || held_ || HasWorkWithoutInput()) return Whole::kOther;
  size_t length = 0;
  const char* bytes = stream_->Peek(&length);
  if (bytes == nullptr) return Whole::kOther;  // the end, or not lent
  if (length == 0) return Whole::kNone;
  if (length < sizeof(Header)) return Whole::kOther;
  // Copied before it is checked: the memory may be another process's.
  // (header_ is free: no message is being read.)
  memcpy(&header_, bytes, sizeof(Header));
  if (!TookWholeMessage(bytes + sizeof(Header), length - sizeof(Header),
                        direct)) {
    return Whole::kOther;
  }
  if (closed_) return Whole::kOther;  // the copy failed
  stream_->Consume(sizeof(Header) + header_.size);
  return Whole::kTaken;
}

Connection::InPlace Connection::ReadInPlace() {
  size_t length = 0;
  const char* bytes = stream_->Peek(&length);
  if (bytes == nullptr) return InPlace::kNo;
  if (length == 0) {
    drained_ = true;  // nothing has arrived: no Read to find that out
    return InPlace::kStop;
  }
  if (length < sizeof(Header)) return InPlace::kNo;
  if (!TakeHeader(bytes)) return InPlace::kStop;
  size_t head = sizeof(Header) + header_.rma_count * sizeof(RmaDescriptor);
  bool in_sender = (header_.flags & kPayloadInSender) != 0;
  if (length < head || (!in_sender && header_.size > length - head)) {
    return InPlace::kNo;  // not all here, or wrapped: through staging
  }
  if (TookWholeMessage(bytes + head, length - head)) {
    if (closed_) return InPlace::kStop;
    stream_->Consume(head + header_.size);
    return InPlace::kDone;
  }
  RmaDescriptor descriptors[kMaxRmaCount];
  if (!TakeDescriptors(bytes + sizeof(Header), descriptors)) {
    return InPlace::kStop;
  }
  if (Intercept(descriptors)) {
    stream_->Consume(head);  // a kAssist has no payload
    return closed_ ? InPlace::kStop : InPlace::kDone;
  }
  target_ = handler_->OnHeader(header_, descriptors);
  SetStalled(target_.kind == RxTarget::kStall);
  if (closed_ || stalled_) return InPlace::kStop;
  placed_ = 0;
  if (in_sender) {
    stream_->Consume(head);
    if (!PullPayload(descriptors)) return InPlace::kStop;
    if (state_ == ReadState::kAwaitCopy) return InPlace::kStop;
  } else {
    Place(bytes + head, header_.size);
    if (closed_) return InPlace::kStop;
    stream_->Consume(head + header_.size);
  }
  handler_->OnMessageDone(header_, placed_);
  return InPlace::kDone;
}

void Connection::ReadInput() {
  while (!closed_) {
    if (state_ == ReadState::kAwaitCopy) {
      if (!FinishAwaitedCopy(/*spin=*/false)) return;
      handler_->OnMessageDone(header_, placed_);
      continue;
    }
    if (state_ == ReadState::kHeader) {
      if (begin_ == end_) {
        // Streams that lend their bytes (shm rings, rxm's buffers): the
        // whole message straight from them, without the staging buffer.
        InPlace in_place = ReadInPlace();
        if (in_place == InPlace::kDone) continue;
        if (in_place == InPlace::kStop) return;
      }
      if (!Fill(sizeof(Header))) return;
      if (!TakeHeader(staging_.get() + begin_)) return;
      size_t head = sizeof(Header) + header_.rma_count * sizeof(RmaDescriptor);
      if (!Fill(head)) return;
      if (TookWholeMessage(staging_.get() + begin_ + head,
                           end_ - begin_ - head)) {
        if (closed_) return;
        begin_ += head + header_.size;
        continue;
      }
      RmaDescriptor descriptors[kMaxRmaCount];
      if (!TakeDescriptors(staging_.get() + begin_ + sizeof(Header),
                           descriptors)) {
        return;
      }
      if (Intercept(descriptors)) {
        begin_ += head;  // a kAssist has no payload
        continue;
      }
      target_ = handler_->OnHeader(header_, descriptors);
      SetStalled(target_.kind == RxTarget::kStall);
      if (closed_ || stalled_) return;
      begin_ += head;
      placed_ = 0;
      if (header_.flags & kPayloadInSender) {
        if (!PullPayload(descriptors)) return;
        if (state_ == ReadState::kAwaitCopy) return;
        handler_->OnMessageDone(header_, placed_);
        continue;
      }
      remaining_ = header_.size;
      state_ = ReadState::kPayload;
    }
    while (remaining_ > 0) {
      size_t available = end_ - begin_;
      if (available > 0) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(available,
                                                          remaining_));
        Place(staging_.get() + begin_, n);
        if (closed_) return;
        begin_ += n;
        remaining_ -= n;
        continue;
      }
      bool more = CanReadDirect() ? ReadDirect() : RecvIntoStaging();
      if (!more) return;
    }
    state_ = ReadState::kHeader;
    handler_->OnMessageDone(header_, placed_);
  }
}

}  // namespace stream
}  // namespace fabric

// Rendezvous over a MsgStream (msg_stream.h): the sender's Expose
// registers a large payload for remote reads, the receiver's StartPull
// reads it with fi_read into the application's buffer.
#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/rxm/msg_stream.h"

namespace fabric {
namespace rxm {
namespace {

// The most one RMA read moves: every device takes that much in one work
// request (a 16 MiB message is 16 reads).
constexpr size_t kMaxRead = 1 << 20;

// Keys for domains that let the application choose them (no
// FI_MR_PROV_KEY): unique in the process. Others ignore them.
std::atomic<uint64_t> next_key{1};

}  // namespace

// The regions of an exposed payload (or of a pull's destination), closed
// when this is.
class ReadRegistrations : public stream::PullExposure {
 public:
  ~ReadRegistrations() override {
    for (fid_mr* mr : mrs_) fi_close(&mr->fid);
  }
  // Registers `piece` with `access`: its region's descriptor and key.
  absl::Status Add(fid_domain* domain, const iovec& piece, uint64_t access,
                   void** desc, uint64_t* key) {
    fid_mr* mr = nullptr;
    int rc = fi_mr_reg(domain, piece.iov_base, piece.iov_len, access, 0,
                       next_key.fetch_add(1), 0, &mr, nullptr);
    if (rc != 0) {
      return FiError(-rc, absl::StrCat("registering ", piece.iov_len,
                                       " bytes for an RMA read: ",
                                       fi_strerror(-rc)));
    }
    mrs_.push_back(mr);
    if (desc != nullptr) *desc = fi_mr_desc(mr);
    if (key != nullptr) *key = fi_mr_key(mr);
    return absl::OkStatus();
  }

 private:
  std::vector<fid_mr*> mrs_;
};

absl::StatusOr<std::unique_ptr<stream::PullExposure>> MsgStream::Expose(
    const iovec* iov, size_t count, stream::RmaDescriptor* out) {
  if (reads_.cq == nullptr) {
    return FiError(FI_EOPNOTSUPP, "the stream's endpoints do no RMA reads");
  }
  auto registered = std::make_unique<ReadRegistrations>();
  for (size_t i = 0; i < count; ++i) {
    uint64_t key = 0;
    FABRIC_RETURN_IF_ERROR(
        registered->Add(domain_, iov[i], FI_REMOTE_READ, nullptr, &key));
    out[i] = {reads_.virt_addr ? reinterpret_cast<uint64_t>(iov[i].iov_base)
                               : 0,
              iov[i].iov_len, key};
  }
  return std::unique_ptr<stream::PullExposure>(std::move(registered));
}

// A read of a large payload into the application's buffers, in segments
// contiguous in one local piece and one remote piece, of at most kMaxRead
// bytes.
class RmaPull : public stream::PullJob {
 public:
  explicit RmaPull(MsgStream* stream) : stream_(stream) {
    stream_->pulling_ = true;
  }
  ~RmaPull() override { stream_->pulling_ = false; }
  ssize_t Finish() override { return stream_->AdvancePull(this); }

  std::vector<iovec> local;
  std::vector<stream::RmaDescriptor> remote;
  std::vector<void*> desc;
  ReadRegistrations destinations;  // with FI_MR_LOCAL
  size_t posted = 0;
  ssize_t total = 0;
  int error = 0;  // -errno the job failed with before a read was posted

 private:
  MsgStream* const stream_;
};

std::unique_ptr<stream::PullJob> MsgStream::StartPull(
    const iovec* to, size_t to_count, const stream::RmaDescriptor* from,
    size_t from_count) {
  if (reads_.cq == nullptr) return nullptr;
  auto pull = std::make_unique<RmaPull>(this);
  size_t piece = 0;
  size_t offset = 0;
  for (size_t r = 0; r < from_count; ++r) {
    uint64_t done = 0;
    while (done < from[r].len && piece < to_count) {
      const size_t n = std::min<uint64_t>(
          {to[piece].iov_len - offset, from[r].len - done, kMaxRead});
      if (n > 0) {
        pull->local.push_back(
            {static_cast<char*>(to[piece].iov_base) + offset, n});
        pull->remote.push_back({from[r].addr + done, n, from[r].key});
        pull->total += static_cast<ssize_t>(n);
      }
      offset += n;
      done += n;
      if (offset == to[piece].iov_len) {
        ++piece;
        offset = 0;
      }
    }
  }
  pull->desc.assign(pull->local.size(), nullptr);
  for (size_t i = 0; register_buffers_ && i < pull->local.size(); ++i) {
    absl::Status added = pull->destinations.Add(domain_, pull->local[i],
                                                FI_READ, &pull->desc[i],
                                                nullptr);
    if (!added.ok()) {
      pull->error = ENOMEM;
      break;
    }
  }
  // One pull at a time on a stream: its connection waits for it.
  buffers_->reads.assign(pull->local.size(), StreamBuffer());
  for (StreamBuffer& read : buffers_->reads) {
    read.owner = buffers_.get();
    read.kind = StreamBuffer::kRead;
  }
  reads_out_ = 0;
  read_error_ = 0;
  return pull;
}

ssize_t MsgStream::AdvancePull(RmaPull* pull) {
  const bool all_posted = pull->posted == pull->local.size();
  if (all_posted && reads_out_ == 0 && read_error_ == 0 &&
      pull->error == 0) {
    return pull->total;
  }
  // A failed read leaves the connection unusable (an RC queue pair goes to
  // its error state), and an ended stream serves no reads: the peer is as
  // good as reset. The reads still out are waited for (they complete or
  // are flushed): the buffer they write into goes back to the application
  // after.
  if (pull->error != 0 || read_error_ != 0 || ended_) {
    if (reads_out_ > 0) return -EAGAIN;
    return pull->error != 0 ? -pull->error : -ECONNRESET;
  }
  while (pull->posted < pull->local.size()) {
    const size_t i = pull->posted;
    ssize_t rc = fi_read(ep_, pull->local[i].iov_base, pull->local[i].iov_len,
                         pull->desc[i], FI_ADDR_UNSPEC, pull->remote[i].addr,
                         pull->remote[i].key, &buffers_->reads[i].context);
    // A full send queue: room comes back as sends and reads complete.
    if (rc == -FI_EAGAIN) return -EAGAIN;
    if (rc != 0) return -ECONNRESET;
    ++reads_out_;
    ++pull->posted;
  }
  return reads_out_ > 0 ? -EAGAIN : pull->total;
}

}  // namespace rxm
}  // namespace fabric

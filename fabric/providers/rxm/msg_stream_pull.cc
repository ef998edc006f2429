// Rendezvous over a MsgStream (msg_stream.h): the sender's Expose
// registers a large payload for remote reads, the receiver's PullFrom
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
// Completions taken from the owner's CQ per read while a Pull waits.
constexpr size_t kCqBatch = 16;

// Keys for domains that let the application choose them (no
// FI_MR_PROV_KEY): unique in the process. Others ignore them.
std::atomic<uint64_t> next_key{1};

// The regions of an exposed payload (or of a Pull's destination), closed
// when this is.
class Registrations : public tcp::PullExposure {
 public:
  ~Registrations() override {
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

}  // namespace

absl::StatusOr<std::unique_ptr<tcp::PullExposure>> MsgStream::Expose(
    const iovec* iov, size_t count, tcp::RmaDescriptor* out) {
  if (reads_.cq == nullptr) {
    return FiError(FI_EOPNOTSUPP, "the stream's endpoints do no RMA reads");
  }
  auto registered = std::make_unique<Registrations>();
  for (size_t i = 0; i < count; ++i) {
    uint64_t key = 0;
    FABRIC_RETURN_IF_ERROR(
        registered->Add(domain_, iov[i], FI_REMOTE_READ, nullptr, &key));
    out[i] = {reads_.virt_addr ? reinterpret_cast<uint64_t>(iov[i].iov_base)
                               : 0,
              iov[i].iov_len, key};
  }
  return std::unique_ptr<tcp::PullExposure>(std::move(registered));
}

ssize_t MsgStream::PullFrom(const iovec* to, size_t to_count,
                            const tcp::RmaDescriptor* from,
                            size_t from_count) {
  if (reads_.cq == nullptr) return -ENOSYS;
  if (ended_) return error_ != 0 ? -error_ : -EPIPE;
  // Segments contiguous in one local piece and one remote piece, of at most
  // kMaxRead bytes.
  std::vector<iovec> local;
  std::vector<tcp::RmaDescriptor> remote;
  size_t piece = 0;
  size_t offset = 0;
  ssize_t total = 0;
  for (size_t r = 0; r < from_count; ++r) {
    uint64_t done = 0;
    while (done < from[r].len && piece < to_count) {
      const size_t n = std::min<uint64_t>(
          {to[piece].iov_len - offset, from[r].len - done, kMaxRead});
      if (n > 0) {
        local.push_back({static_cast<char*>(to[piece].iov_base) + offset, n});
        remote.push_back({from[r].addr + done, n, from[r].key});
        total += static_cast<ssize_t>(n);
      }
      offset += n;
      done += n;
      if (offset == to[piece].iov_len) {
        ++piece;
        offset = 0;
      }
    }
  }
  Registrations destinations;
  std::vector<void*> desc(local.size(), nullptr);
  for (size_t i = 0; register_buffers_ && i < local.size(); ++i) {
    absl::Status added =
        destinations.Add(domain_, local[i], FI_READ, &desc[i], nullptr);
    if (!added.ok()) return -ENOMEM;
  }
  read_error_ = 0;
  const int rc = PostReads(local, remote, desc);
  WaitForReads();  // for those posted, even when one could not be
  // A failed read leaves the connection unusable (an RC queue pair goes to
  // its error state): the stream's peer is as good as reset.
  if (rc != 0 || read_error_ != 0) return -ECONNRESET;
  return total;
}

int MsgStream::PostReads(const std::vector<iovec>& local,
                         const std::vector<tcp::RmaDescriptor>& remote,
                         const std::vector<void*>& desc) {
  std::vector<StreamBuffer>& reads = buffers_->reads;
  reads.assign(local.size(), StreamBuffer());
  for (size_t i = 0; i < local.size(); ++i) {
    reads[i].owner = buffers_.get();
    reads[i].kind = StreamBuffer::kRead;
    for (;;) {
      ssize_t rc = fi_read(ep_, local[i].iov_base, local[i].iov_len, desc[i],
                           FI_ADDR_UNSPEC, remote[i].addr, remote[i].key,
                           &reads[i].context);
      if (rc == 0) break;
      if (rc != -FI_EAGAIN) return static_cast<int>(rc);
      WaitForReads();  // the send queue is full: room comes back
      if (read_error_ != 0) return -read_error_;
      if (reads_out_ == 0 && ended_) return -FI_ECONNRESET;
    }
    ++reads_out_;
  }
  return 0;
}

void MsgStream::WaitForReads() {
  fi_cq_msg_entry entries[kCqBatch];
  do {
    // fi_cq_read runs the internal domain's progress, which completes them.
    ssize_t n = fi_cq_read(reads_.cq, entries, kCqBatch);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error = {};
      if (fi_cq_readerr(reads_.cq, &error, 0) == 1) {
        DispatchError(error.op_context, error.err);
      }
      continue;
    }
    for (ssize_t i = 0; i < n; ++i) {
      DispatchCompletion(entries[i].op_context, entries[i].len);
    }
  } while (reads_out_ > 0);
}

}  // namespace rxm
}  // namespace fabric

// How transmit operations are posted on a link (in order, behind a fence,
// a large payload left in the sender when the peer can copy it) and
// completed.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {
namespace {

// Sends `entry` on `link`, or holds it back behind an FI_FENCE.
void QueueTx(Link* link, std::unique_ptr<TxEntry> entry) {
  if (!link->fenced.empty() || (entry->fence && link->answers_pending > 0)) {
    link->fenced.push_back(std::move(entry));
    return;
  }
  if (entry->awaits_answer) ++link->answers_pending;
  link->connection.Send(std::move(entry));
}

}  // namespace

void RecycleTxEntry(StreamEp* ep, std::unique_ptr<TxEntry> entry) {
  // The peer is done with an exposed payload (or never will be).
  entry->exposure.reset();
  // Large owned copies are not worth keeping.
  if (entry->owned.capacity() <= 4096) ep->spare_tx.Keep(std::move(entry));
}

void CompleteTx(StreamEp* ep, std::unique_ptr<TxEntry> entry, int error) {
  if (!entry->report) {
    RecycleTxEntry(ep, std::move(entry));
    return;
  }
  GiveTxSlot(ep);
  UtilEndpoint& util = ep->util;
  CntrKind cntr = static_cast<CntrKind>(entry->cntr);
  if (error == 0) {
    ReportSuccess(&util, util.tx_cq, entry->write_entry, entry->reserved,
                  entry->completion, FI_ADDR_NOTAVAIL, cntr);
  } else {
    ReportError(&util, util.tx_cq, entry->reserved, entry->completion, error, 0,
                cntr);
  }
  RecycleTxEntry(ep, std::move(entry));
}

void LeavePayloadInPlace(Link* link, TxEntry* entry) {
  Header& header = entry->header;
  Op op = static_cast<Op>(header.op);
  const bool message = op == Op::kMsg || op == Op::kTagged;
  const bool write = op == Op::kWrite;
  const bool read_data = op == Op::kReadResponse;
  // A write's target descriptors come first.
  const size_t first = write ? header.rma_count : 0;
  if ((!message && !write && !read_data) || header.size < kPayloadInPlaceMin ||
      !entry->owned.empty() || entry->payload.empty() ||
      entry->payload.size() > kMaxRmaCount - first ||
      !link->connection.PeerCanPull() ||
      // A read's data awaits no answer that could release an exposure.
      (read_data && !link->connection.ExposureKeepsNothing())) {
    return;
  }
  absl::StatusOr<std::unique_ptr<PullExposure>> exposure =
      link->connection.Expose(entry->payload.data(), entry->payload.size(),
                              entry->descriptors + first);
  if (!exposure.ok()) {
    FI_INFO(link->ep->log(), FI_LOG_EP_DATA,
            "a large payload goes through the stream: %s\n",
            std::string(exposure.status().message()).c_str());
    return;
  }
  entry->exposure = *std::move(exposure);
  header.rma_count = static_cast<uint16_t>(first + entry->payload.size());
  header.flags |= kPayloadInSender;
  // A message asks for the answer that ends the loan; a write is answered
  // anyway; a read's data is answered by nobody.
  if (message) header.flags |= kAckRequested;
  if (write) header.tag = entry->payload.size();
  if (!read_data) entry->awaits_answer = true;
  entry->payload.clear();
}

ssize_t PostTx(Link* link, std::unique_ptr<TxEntry> entry) {
  StreamEp* ep = link->ep;
  if (link->connection.closed()) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "transmit on a closed connection\n");
    return -FI_ENOTCONN;
  }
  if (!TakeTxSlot(ep)) return -FI_EAGAIN;
  if (entry->write_entry) {
    if (CqReserve(ep->util.tx_cq) != 0) {
      GiveTxSlot(ep);
      return -FI_EAGAIN;
    }
    entry->reserved = true;
  }
  LeavePayloadInPlace(link, entry.get());
  entry->header.id = ep->next_id++;
  QueueTx(link, std::move(entry));
  return 0;
}

ssize_t SendNow(StreamEp* ep, fi_addr_t dest, Header header,
                const AppBuffer& payload, const fi_cq_tagged_entry& completion,
                bool write_entry) {
  // Larger messages may stay in the sender (LeavePayloadInPlace).
  constexpr size_t kMaxPieces = 8;
  const HmemCopier& copier = ep->util.domain->copier;
  if (header.size >= kPayloadInPlaceMin || payload.size() >= kMaxPieces ||
      !DirectlyAccessible(copier, payload)) {
    return kSendLater;
  }
  int error = 0;
  Link* link = ep->owner->LinkFor(dest, &error);
  if (link == nullptr) return error;
  if (!link->fenced.empty() || !link->connection.CanWriteNow()) {
    return kSendLater;
  }
  bool reserved = false;
  if (write_entry) {
    if (CqReserve(ep->util.tx_cq) != 0) return -FI_EAGAIN;
    reserved = true;
  }
  header.id = ep->next_id++;
  iovec iov[kMaxPieces];
  size_t count = 0;
  iov[count++] = {&header, sizeof(header)};
  for (const AppBufferPiece& piece : payload) iov[count++] = piece.iov;
  ssize_t written = link->connection.WriteNow(iov, count);
  size_t wire = sizeof(header) + header.size;
  CntrKind cntr = kSendCntr;
  if (written == static_cast<ssize_t>(wire)) {
    ReportSuccess(&ep->util, ep->util.tx_cq, write_entry, reserved, completion,
                  FI_ADDR_NOTAVAIL, cntr);
    return 0;
  }
  // The stream took part or none (or is broken: flushing the entry closes
  // the connection and fails it).
  std::unique_ptr<TxEntry> entry = ep->spare_tx.Take();
  entry->owned.resize(header.size);
  ssize_t copied = GatherAppBuffer(copier, payload, entry->owned.data(),
                                   entry->owned.size());
  if (copied != static_cast<ssize_t>(header.size)) {
    // Host memory just written from: not expected. The stream may hold part
    // of the message, so the connection cannot go on.
    ReportError(&ep->util, ep->util.tx_cq, reserved, completion, FI_EIO, 0,
                cntr);
    RecycleTxEntry(ep, std::move(entry));
    link->connection.Close(-FI_EIO);
    return 0;
  }
  entry->header = header;
  entry->completion = completion;
  entry->write_entry = write_entry;
  entry->reserved = reserved;
  entry->cntr = cntr;
  entry->sent = written > 0 ? static_cast<size_t>(written) : 0;
  entry->payload = {{entry->owned.data(), entry->owned.size()}};
  CountTxSlot(ep);
  link->connection.Send(std::move(entry));
  return 0;
}

void MoveQueuedTx(Link* from, Link* to) {
  for (auto& entry : from->connection.TakeQueued()) {
    if (entry->awaits_answer) --from->answers_pending;
    QueueTx(to, std::move(entry));
  }
  for (auto& entry : from->fenced) QueueTx(to, std::move(entry));
  from->fenced.clear();
}

}  // namespace stream
}  // namespace fabric

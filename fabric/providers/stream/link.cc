// What a link does with each arriving message (Link::OnHeader and
// OnMessageDone: matching, RMA and atomics at the target, answers) and with
// its connection's events.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <utility>

#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/mr.h"

namespace fabric {
namespace stream {
namespace {

constexpr size_t kMaxUnexpectedBytes = size_t{64} << 20;

RxTarget UserTarget(Link* link, PostedRecv& recv) {
  RxTarget target;
  target.kind = RxTarget::kUser;
  target.iface = recv.iface;
  target.device = recv.device;
  if (recv.flags & FI_MULTI_RECV) {
    link->rx_window = {static_cast<char*>(recv.iov[0].iov_base) + recv.used,
                       recv.capacity - recv.used};
    target.iov = &link->rx_window;
    target.iov_count = 1;
    target.capacity = link->rx_window.iov_len;
  } else {
    target.iov = recv.iov.data();
    target.iov_count = recv.iov.size();
    target.capacity = recv.capacity;
  }
  return target;
}

// Sends what FI_FENCE held back, as far as the fences allow.
void ReleaseFenced(Link* link) {
  while (!link->fenced.empty() && !link->connection.closed()) {
    if (link->fenced.front()->fence && link->answers_pending > 0) return;
    std::unique_ptr<TxEntry> entry = std::move(link->fenced.front());
    link->fenced.pop_front();
    if (entry->awaits_answer) ++link->answers_pending;
    link->connection.Send(std::move(entry));
  }
}

bool ResourceManaged(const StreamEp* ep) {
  return ep->util.domain->info->domain_attr->resource_mgmt != FI_RM_DISABLED;
}

// After the target answered a request: a refusal (FI_ENORX, FI_EACCES) is
// a resource-management error, which disables a connected endpoint
// (fi_domain(3)): the connection is torn down, every operation still
// outstanding fails with FI_ECANCELED, and FI_SHUTDOWN follows. Otherwise
// what FI_FENCE held back may go.
void AfterAnswer(Link* link, int32_t status) {
  if (status != 0) {
    FI_WARN(link->ep->log(), FI_LOG_EP_DATA,
            "the peer refused a request (%s): closing the connection\n",
            fi_strerror(-status));
    link->connection.Close(-FI_ECANCELED);
    return;
  }
  ReleaseFenced(link);
}

// Whether `request` is answered with kReadResponse: a read, or an atomic
// that fetches the old values.
bool AwaitsData(const TxEntry& request) {
  if (request.header.op == static_cast<uint8_t>(Op::kReadRequest)) return true;
  return request.header.op == static_cast<uint8_t>(Op::kAtomic) &&
         UnpackAtomic(request.header.tag).kind != AtomicKind::kWrite;
}

RxTarget ProtocolError(Link* link, const char* what) {
  FI_WARN(link->ep->log(), FI_LOG_EP_DATA, "closing the connection: %s\n",
          what);
  link->connection.Close(-FI_EIO);
  return RxTarget();
}

void AnswerRead(Link* link, const Header& header,
                const RmaDescriptor* descriptors) {
  StreamEp* ep = link->ep;
  RxTarget memory;
  int status = ResolveRma(link, header, descriptors, FI_REMOTE_READ, &memory);
  std::unique_ptr<TxEntry> answer = ep->spare_tx.Take();
  answer->header.op = static_cast<uint8_t>(Op::kReadResponse);
  answer->header.id = header.id;
  answer->header.status = status;
  answer->report = false;
  if (status == 0) {
    uint64_t total = 0;
    for (uint16_t i = 0; i < header.rma_count; ++i) {
      total += descriptors[i].len;
    }
    answer->header.size = total;
    const HmemCopier& copier = ep->util.domain->copier;
    if (memory.iface == FI_HMEM_SYSTEM && copier.DirectSystemAccess()) {
      answer->payload = link->rma_target;
      // The data may stay where it is for the reader to copy (one copy
      // instead of two through the stream). The reader copies after this
      // answer arrives, so not where a counter of remote reads (the
      // endpoint's or an MR's, FI_RMA_EVENT) would count the read before
      // that; elsewhere the target learns of the read only from the
      // reader, after it completed.
      if (ep->util.cntrs[kRemoteReadCntr] == nullptr &&
          link->rma_cntrs.empty()) {
        LeavePayloadInPlace(link, answer.get());
      }
    } else {
      answer->owned.resize(total);
      ssize_t copied = copier.CopyFromIov(
          answer->owned.data(), total, memory.iface, memory.device,
          link->rma_target.data(), link->rma_target.size(), 0);
      if (copied != static_cast<ssize_t>(total)) {
        answer->header.status = copied < 0 ? static_cast<int32_t>(copied)
                                           : -FI_EIO;
        answer->header.size = 0;
        answer->owned.clear();
      } else {
        answer->payload = {{answer->owned.data(), answer->owned.size()}};
      }
    }
    if (answer->header.status == 0 &&
        ep->util.cntrs[kRemoteReadCntr] != nullptr) {
      CntrAdd(ep->util.cntrs[kRemoteReadCntr], 1);
    }
  }
  link->connection.Send(std::move(answer));
}

}  // namespace

void CompleteRecv(StreamEp* ep, Link* link, fi_addr_t source,
                  std::unique_ptr<PostedRecv> recv, const Header& header,
                  size_t placed) {
  UtilEndpoint& util = ep->util;
  fi_cq_tagged_entry entry = RecvCompletion(*recv, header, placed);
  bool multi = (recv->flags & FI_MULTI_RECV) != 0;
  size_t room = multi ? recv->capacity - recv->used : recv->capacity;
  if (header.size > room) {
    ReportError(&util, util.rx_cq, recv->reserved, entry, FI_ETRUNC,
                header.size - placed, kRecvCntr);
  } else if (multi) {
    recv->used += placed;
    bool released = recv->capacity - recv->used < util.min_multi_recv;
    if (released) entry.flags |= FI_MULTI_RECV;
    ReportSuccess(&util, util.rx_cq, recv->write_entry, false, entry, source,
                  kRecvCntr);
    if (!released) ep->recvs.push_front(std::move(recv));
  } else if (source == FI_ADDR_NOTAVAIL && ep->source_err && link != nullptr &&
             !link->peer_name.empty() && util.rx_cq != nullptr) {
    // FI_SOURCE_ERR: the data arrived, but its source is not in the AV: an
    // error entry whose err_data is the source's address.
    fi_cq_err_entry error = ErrorEntryOf(entry, FI_EADDRNOTAVAIL, 0);
    error.prov_errno = FI_EADDRNOTAVAIL;
    error.err_data = link->peer_name.data();
    error.err_data_size = link->peer_name.size();
    CqWriteError(util.rx_cq, error, recv->reserved);
    if (util.cntrs[kRecvCntr] != nullptr) CntrAdd(util.cntrs[kRecvCntr], 1);
  } else {
    ReportSuccess(&util, util.rx_cq, recv->write_entry, recv->reserved, entry,
                  source, kRecvCntr);
  }
  if ((header.flags & kAckRequested) && link != nullptr) {
    SendAnswer(link, Op::kAck, header.id, 0);
  }
  // Null when kept (FI_MULTI_RECV).
  ep->spare_recvs.Keep(std::move(recv));
}

void SendAnswer(Link* link, Op op, uint64_t id, int32_t status) {
  std::unique_ptr<TxEntry> answer = link->ep->spare_tx.Take();
  answer->header.op = static_cast<uint8_t>(op);
  answer->header.id = id;
  answer->header.status = status;
  answer->report = false;
  link->connection.Send(std::move(answer));
}

int ResolveRma(Link* link, const Header& header,
               const RmaDescriptor* descriptors, uint64_t access,
               RxTarget* target) {
  StreamEp* ep = link->ep;
  link->rma_target.clear();
  link->rma_cntrs.clear();
  for (uint16_t i = 0; i < TargetDescriptorCount(header); ++i) {
    RemoteAccess request;
    request.key = descriptors[i].key;
    request.addr = descriptors[i].addr;
    request.len = descriptors[i].len;
    request.access = access;
    request.target = &ep->util;
    absl::StatusOr<RemoteRegion> region =
        MrResolveRemote(ep->util.domain, request);
    if (!region.ok()) {
      FI_WARN(ep->log(), FI_LOG_EP_DATA, "remote access refused: %s\n",
              std::string(region.status().message()).c_str());
      return -FI_EACCES;
    }
    link->rma_target.insert(link->rma_target.end(), region->pieces.begin(),
                            region->pieces.end());
    target->iface = region->iface;
    target->device = region->device;
    UtilCntr* cntr = region->cntr;
    if (cntr != nullptr &&
        std::find(link->rma_cntrs.begin(), link->rma_cntrs.end(), cntr) ==
            link->rma_cntrs.end()) {
      link->rma_cntrs.push_back(cntr);
    }
  }
  target->iov = link->rma_target.data();
  target->iov_count = link->rma_target.size();
  return 0;
}

void RemoteAccessDone(Link* link, const Header& header, uint64_t kind,
                      bool read) {
  StreamEp* ep = link->ep;
  if (read && ep->util.cntrs[kRemoteReadCntr] != nullptr) {
    CntrAdd(ep->util.cntrs[kRemoteReadCntr], 1);
  }
  if (ep->util.cntrs[kRemoteWriteCntr] != nullptr) {
    CntrAdd(ep->util.cntrs[kRemoteWriteCntr], 1);
  }
  // Counters bound to the regions written (fi_mr_bind FI_REMOTE_WRITE).
  for (UtilCntr* cntr : link->rma_cntrs) CntrAdd(cntr, 1);
  if ((header.flags & kRemoteData) && ep->util.rx_cq != nullptr) {
    fi_cq_tagged_entry entry = {};
    entry.flags = kind | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
    entry.data = header.data;
    // Queued even when full (cq.h); only a foreign peer CQ owner refuses.
    if (CqWrite(ep->util.rx_cq, entry, link->peer) != 0) {
      FI_WARN(ep->log(), FI_LOG_CQ,
              "the peer CQ's owner refused remote CQ data\n");
    }
  }
}

void ResumeHeldForCqRoom(StreamEp* ep) {
  if (CqFull(ep->util.rx_cq)) {
    AskForNextPass(ep);
    return;
  }
  ep->awaiting_cq_room = false;
  ep->owner->ReceivePosted();
}

Link::Link(StreamEp* ep, std::unique_ptr<ByteStream> stream, fi_addr_t peer)
    : ep(ep),
      peer(peer),
      connection(std::move(stream), this, &ep->util.domain->copier) {}

Link::~Link() {
  if (connection.stalled()) --ep->stalled_links;
  for (UnexpectedMsg& message : ep->unexpected) {
    if (message.link == this) message.link = nullptr;
  }
  for (auto& [context, message] : ep->claimed) {
    if (message.link == this) message.link = nullptr;
  }
  for (PeerHeldMsg& held : ep->peer_held) {
    if (held.message.link == this) held.message.link = nullptr;
  }
}

void Link::FindPeerAgain() {
  if (peer == FI_ADDR_NOTAVAIL) peer = FindSender(*ep, peer_name);
}

RxTarget Link::OnHeader(const Header& header,
                        const RmaDescriptor* descriptors) {
  // Set by TakeWholeMessage for this message only.
  const bool searched = std::exchange(no_recv_matches, false);
  FindPeerAgain();
  switch (static_cast<Op>(header.op)) {
    case Op::kMsg: {
      if (ep->peer_srx != nullptr) return PeerSrxHeader(this, header);
      auto it = searched
                    ? ep->recvs.end()
                    : FindRecv(ep->recvs, ep->directed_recv, peer, false, 0);
      if (it == ep->recvs.end()) {
        // Resource management (fi_domain(3)): enabled, the message waits
        // for a receive; disabled, it is dropped and the sender's transmit
        // fails with FI_ENORX.
        if (!ResourceManaged(ep)) {
          refused = true;
          return RxTarget{RxTarget::kDiscard};
        }
        return RxTarget{RxTarget::kStall};
      }
      // A multi-receive buffer's completions take no reserved room.
      if (((*it)->flags & FI_MULTI_RECV) && (*it)->write_entry &&
          WaitForRxCqRoom(ep)) {
        return RxTarget{RxTarget::kStall};
      }
      current_recv = std::move(*it);
      ep->recvs.erase(it);
      return UserTarget(this, *current_recv);
    }
    case Op::kTagged: {
      if (ep->peer_srx != nullptr) return PeerSrxHeader(this, header);
      auto it = searched ? ep->tagged_recvs.end()
                         : FindRecv(ep->tagged_recvs, ep->directed_recv, peer,
                                    true, header.tag);
      if (it != ep->tagged_recvs.end()) {
        current_recv = std::move(*it);
        ep->tagged_recvs.erase(it);
        return UserTarget(this, *current_recv);
      }
      if (ep->unexpected_bytes + header.size > kMaxUnexpectedBytes) {
        return RxTarget{RxTarget::kStall};
      }
      current_unexpected.emplace();
      current_unexpected->header = header;
      current_unexpected->link = this;
      current_unexpected->source = peer;
      if (peer == FI_ADDR_NOTAVAIL) current_unexpected->sender_name = peer_name;
      current_unexpected->data.reserve(header.size);
      RxTarget target;
      target.kind = RxTarget::kBuffer;
      target.buffer = &current_unexpected->data;
      return target;
    }
    case Op::kWrite: {
      if ((header.flags & kRemoteData) && WaitForRxCqRoom(ep)) {
        return RxTarget{RxTarget::kStall};
      }
      RxTarget target;
      rma_status =
          ResolveRma(this, header, descriptors, FI_REMOTE_WRITE, &target);
      if (rma_status != 0) return RxTarget{RxTarget::kDiscard};
      target.kind = RxTarget::kUser;
      target.capacity = header.size;
      return target;
    }
    case Op::kReadRequest:
      AnswerRead(this, header, descriptors);
      return RxTarget{RxTarget::kDiscard};
    case Op::kAtomic:
      if ((header.flags & kRemoteData) && WaitForRxCqRoom(ep)) {
        return RxTarget{RxTarget::kStall};
      }
      return AtomicHeader(this, header, descriptors);
    case Op::kReadResponse: {
      auto it = awaiting.find(header.id);
      if (it == awaiting.end() || !AwaitsData(*it->second)) {
        return ProtocolError(this, "a read response for no read");
      }
      size_t expected = 0;
      for (const iovec& piece : it->second->read_iov) {
        expected += piece.iov_len;
      }
      if (header.size != (header.status == 0 ? expected : 0)) {
        return ProtocolError(this, "a read response of the wrong length");
      }
      current_read = std::move(it->second);
      awaiting.erase(it);
      if (header.status != 0) return RxTarget{RxTarget::kDiscard};
      RxTarget target;
      target.kind = RxTarget::kUser;
      target.iov = current_read->read_iov.data();
      target.iov_count = current_read->read_iov.size();
      target.capacity = expected;
      target.iface = current_read->read_iface;
      target.device = current_read->read_device;
      return target;
    }
    case Op::kAssist:  // the connection's own (Connection::Intercept)
      return ProtocolError(this, "an assist request past its connection");
    case Op::kAck:
      if (awaiting.count(header.id) == 0) {
        return ProtocolError(this, "an answer to no request");
      }
      return RxTarget{RxTarget::kDiscard};
  }
  return ProtocolError(this, "unknown opcode");
}

bool Link::TakeWholeMessage(const Header& header, const char* payload,
                            CqReadBuffer* direct) {
  // Only the posted receive in host memory (or the peer SRX owner's
  // buffer) that takes all of the message here; the rest (unexpected,
  // FI_MULTI_RECV, truncation, FI_SOURCE_ERR) goes through OnHeader.
  no_recv_matches = false;
  FindPeerAgain();
  if (peer == FI_ADDR_NOTAVAIL && ep->source_err) return false;
  if (ep->peer_srx != nullptr) {
    // The owner's buffer; not on a direct read, which OnHeader does not
    // follow to take the owner's answer.
    return direct == nullptr && PeerSrxTakeWhole(this, header, payload);
  }
  const bool tagged = header.op == static_cast<uint8_t>(Op::kTagged);
  auto& queue = tagged ? ep->tagged_recvs : ep->recvs;
  auto it = FindRecv(queue, ep->directed_recv, peer, tagged, header.tag);
  if (it == queue.end()) {
    // OnHeader, which follows unless the read is direct, need not look
    // again.
    no_recv_matches = direct == nullptr;
    return false;
  }
  if (!(*it)->TakesWhole(header.size)) return false;
  std::unique_ptr<PostedRecv> taken = std::move(*it);
  queue.erase(it);
  ssize_t copied = FillWhole(ep->util.domain->copier, taken->iov.data(),
                             taken->iov.size(), payload, header.size);
  if (copied < 0) {
    // As a failed copy on the general way: the connection closes, and
    // FailOutstanding fails the receive.
    current_recv = std::move(taken);
    connection.Close(static_cast<int>(copied));
    return true;
  }
  if (direct != nullptr && direct->cq == ep->util.rx_cq && taken->write_entry &&
      direct->written < direct->count) {
    // Straight into the reader's buffer, as ReportSuccess would queue it.
    CqWriteToReader(direct, RecvCompletion(*taken, header, header.size), peer,
                    taken->reserved);
    if (ep->util.cntrs[kRecvCntr] != nullptr) {
      CntrAdd(ep->util.cntrs[kRecvCntr], 1);
    }
    ep->spare_recvs.Keep(std::move(taken));
    return true;
  }
  CompleteRecv(ep, this, peer, std::move(taken), header, header.size);
  return true;
}

void Link::OnMessageDone(const Header& header, size_t placed) {
  switch (static_cast<Op>(header.op)) {
    case Op::kMsg:
    case Op::kTagged:
      if (refused) {
        refused = false;
        FI_INFO(ep->log(), FI_LOG_EP_DATA,
                "no receive posted: message refused (FI_ENORX)\n");
        if (header.flags & kAckRequested) {
          SendAnswer(this, Op::kAck, header.id, -FI_ENORX);
        }
        return;
      }
      if (peer_entry != nullptr) {
        PeerSrxMessageDone(this, header, placed);
        return;
      }
      if (current_unexpected.has_value()) {
        UnexpectedMsg message = std::move(*current_unexpected);
        current_unexpected.reset();
        // The AV may have taken the sender while its message arrived.
        FindPeerAgain();
        message.source = peer;
        if (peer != FI_ADDR_NOTAVAIL) message.sender_name.clear();
        // A receive posted while the message arrived takes it now: older
        // buffered messages it would have taken first were taken when it
        // was posted.
        auto it = FindRecv(ep->tagged_recvs, ep->directed_recv, peer, true,
                           header.tag);
        if (it != ep->tagged_recvs.end()) {
          std::unique_ptr<PostedRecv> recv = std::move(*it);
          ep->tagged_recvs.erase(it);
          DeliverUnexpected(ep, std::move(message), std::move(recv));
          return;
        }
        ep->unexpected_bytes += header.size;
        ep->unexpected.push_back(std::move(message));
        return;
      }
      CompleteRecv(ep, this, peer, std::move(current_recv), header, placed);
      return;
    case Op::kWrite:
      SendAnswer(this, Op::kAck, header.id, rma_status);
      if (rma_status == 0) RemoteAccessDone(this, header, FI_RMA, false);
      return;
    case Op::kAtomic:
      AtomicDone(this, header);
      return;
    case Op::kReadRequest:
    case Op::kAssist:  // never gets here (OnHeader refused it)
      return;
    case Op::kReadResponse:
      --answers_pending;
      CompleteTx(ep, std::move(current_read), -header.status);
      AfterAnswer(this, header.status);
      return;
    case Op::kAck: {
      auto it = awaiting.find(header.id);
      std::unique_ptr<TxEntry> entry = std::move(it->second);
      awaiting.erase(it);
      --answers_pending;
      CompleteTx(ep, std::move(entry), -header.status);
      AfterAnswer(this, header.status);
      return;
    }
  }
}

void Link::OnSent(std::unique_ptr<TxEntry> entry) {
  if (!entry->report) {
    RecycleTxEntry(ep, std::move(entry));
    return;
  }
  if (entry->awaits_answer) {
    uint64_t id = entry->header.id;
    awaiting.emplace(id, std::move(entry));
    return;
  }
  CompleteTx(ep, std::move(entry), 0);
}

void Link::OnStalled(bool stalled) {
  if (stalled) {
    ++ep->stalled_links;
  } else {
    --ep->stalled_links;
  }
}

void Link::OnClosed(int error) {
  FailOutstanding(error != 0 ? -error : FI_ECONNRESET);
  ep->owner->LinkClosed(this, error);
}

void Link::OnBacklog(bool backlogged) {
  ep->owner->LinkBacklog(this, backlogged);
}

void Link::FailOutstanding(int err) {
  auto fail = [this, err](std::unique_ptr<TxEntry> entry) {
    CompleteTx(ep, std::move(entry), err);
  };
  for (auto& entry : connection.TakeQueued()) fail(std::move(entry));
  for (auto& [id, entry] : awaiting) fail(std::move(entry));
  awaiting.clear();
  for (auto& entry : fenced) fail(std::move(entry));
  fenced.clear();
  answers_pending = 0;
  if (current_read != nullptr) fail(std::move(current_read));
  if (current_recv != nullptr) {
    fi_cq_tagged_entry entry = {};
    entry.op_context = current_recv->context;
    entry.flags = FI_RECV | (current_recv->tagged ? FI_TAGGED : FI_MSG);
    ReportError(&ep->util, ep->util.rx_cq, current_recv->reserved, entry, err,
                0, kRecvCntr);
    current_recv.reset();
  }
  if (peer_entry != nullptr) {
    ReturnPeerEntry(ep, peer_entry);
    peer_entry = nullptr;
  }
}

void Link::Unreserve() {
  auto unreserve_tx = [this](const std::unique_ptr<TxEntry>& entry) {
    if (entry->reserved) CqUnreserve(ep->util.tx_cq);
  };
  for (const auto& entry : connection.TakeQueued()) unreserve_tx(entry);
  for (const auto& [id, entry] : awaiting) unreserve_tx(entry);
  for (const auto& entry : fenced) unreserve_tx(entry);
  if (current_read != nullptr) unreserve_tx(current_read);
  if (current_recv != nullptr && current_recv->reserved) {
    CqUnreserve(ep->util.rx_cq);
  }
}

}  // namespace stream
}  // namespace fabric

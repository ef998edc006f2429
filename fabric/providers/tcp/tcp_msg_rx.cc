// What a tcp MSG endpoint does with each arriving message, and how its
// transmit operations are posted and completed.
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>

#include "fabric/providers/tcp/tcp_msg_ep.h"
#include "fabric/providers/util/mr.h"

namespace fabric {
namespace tcp {
namespace {

constexpr size_t kMaxUnexpectedBytes = size_t{64} << 20;

bool TagMatches(const PostedRecv& recv, uint64_t tag) {
  return ((recv.tag ^ tag) & ~recv.ignore) == 0;
}

RxTarget UserTarget(TcpMsgEp* ep, PostedRecv& recv) {
  RxTarget target;
  target.kind = RxTarget::kUser;
  target.iface = recv.iface;
  target.device = recv.device;
  if (recv.flags & FI_MULTI_RECV) {
    ep->rx_window = {static_cast<char*>(recv.iov[0].iov_base) + recv.used,
                     recv.capacity - recv.used};
    target.iov = &ep->rx_window;
    target.iov_count = 1;
    target.capacity = ep->rx_window.iov_len;
  } else {
    target.iov = recv.iov.data();
    target.iov_count = recv.iov.size();
    target.capacity = recv.capacity;
  }
  return target;
}

void SendAnswer(TcpMsgEp* ep, Op op, uint64_t id, int32_t status) {
  auto answer = std::make_unique<TxEntry>();
  answer->header.op = static_cast<uint8_t>(op);
  answer->header.id = id;
  answer->header.status = status;
  answer->report = false;
  ep->connection->Send(std::move(answer));
}

// Sends what FI_FENCE held back, as far as the fences allow.
void ReleaseFenced(TcpMsgEp* ep) {
  while (!ep->fenced.empty() && !ep->connection->closed()) {
    if (ep->fenced.front()->fence && ep->answers_pending > 0) return;
    std::unique_ptr<TxEntry> entry = std::move(ep->fenced.front());
    ep->fenced.pop_front();
    if (entry->awaits_answer) ++ep->answers_pending;
    ep->connection->Send(std::move(entry));
  }
}

// Completes a receive with the message `header`, of which `placed` bytes
// landed in its buffer.
void CompleteRecv(TcpMsgEp* ep, std::unique_ptr<PostedRecv> recv,
                  const Header& header, size_t placed) {
  UtilEndpoint& util = ep->util;
  fi_cq_tagged_entry entry = {};
  entry.op_context = recv->context;
  entry.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG);
  if (header.flags & kRemoteData) {
    entry.flags |= FI_REMOTE_CQ_DATA;
    entry.data = header.data;
  }
  entry.len = placed;
  entry.tag = header.tag;
  bool multi = (recv->flags & FI_MULTI_RECV) != 0;
  entry.buf = multi ? static_cast<char*>(recv->iov[0].iov_base) + recv->used
                    : recv->iov.empty() ? nullptr : recv->iov[0].iov_base;
  size_t room = multi ? recv->capacity - recv->used : recv->capacity;
  if (header.size > room) {
    ReportError(&util, util.rx_cq, recv->reserved, entry, FI_ETRUNC,
                header.size - placed, kRecvCntr);
  } else if (multi) {
    recv->used += placed;
    bool released = recv->capacity - recv->used < util.min_multi_recv;
    if (released) entry.flags |= FI_MULTI_RECV;
    ReportSuccess(&util, util.rx_cq, recv->write_entry, false, entry,
                  FI_ADDR_NOTAVAIL, kRecvCntr);
    if (!released) ep->recvs.push_front(std::move(recv));
  } else {
    ReportSuccess(&util, util.rx_cq, recv->write_entry, recv->reserved, entry,
                  FI_ADDR_NOTAVAIL, kRecvCntr);
  }
  if (header.flags & kAckRequested) {
    SendAnswer(ep, Op::kAck, header.id, 0);
  }
}

bool ResourceManaged(const TcpMsgEp* ep) {
  return ep->util.domain->info->domain_attr->resource_mgmt != FI_RM_DISABLED;
}

// After the target answered a request: a refusal (FI_ENORX, FI_EACCES) is
// a resource-management error, which disables a connected endpoint
// (fi_domain(3)): the connection is torn down, every operation still
// outstanding fails with FI_ECANCELED, and FI_SHUTDOWN follows. Otherwise
// what FI_FENCE held back may go.
void AfterAnswer(TcpMsgEp* ep, int32_t status) {
  if (status != 0) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA,
            "the peer refused a request (%s): closing the connection\n",
            fi_strerror(-status));
    ep->connection->Close(-FI_ECANCELED);
    return;
  }
  ReleaseFenced(ep);
}

RxTarget ProtocolError(TcpMsgEp* ep, const char* what) {
  FI_WARN(ep->log(), FI_LOG_EP_DATA, "closing the connection: %s\n", what);
  ep->connection->Close(-FI_EIO);
  return RxTarget();
}

// The local memory of a remote access, or FI_EACCES.
int ResolveRma(TcpMsgEp* ep, const Header& header,
               const RmaDescriptor* descriptors, uint64_t access,
               RxTarget* target) {
  ep->rma_target.clear();
  for (uint16_t i = 0; i < header.rma_count; ++i) {
    absl::StatusOr<std::vector<iovec>> pieces = MrResolveRemote(
        ep->util.domain, descriptors[i].key, descriptors[i].addr,
        descriptors[i].len, access, &target->iface, &target->device);
    if (!pieces.ok()) {
      FI_WARN(ep->log(), FI_LOG_EP_DATA, "remote access refused: %s\n",
              std::string(pieces.status().message()).c_str());
      return -FI_EACCES;
    }
    ep->rma_target.insert(ep->rma_target.end(), pieces->begin(),
                          pieces->end());
  }
  target->iov = ep->rma_target.data();
  target->iov_count = ep->rma_target.size();
  return 0;
}

void AnswerRead(TcpMsgEp* ep, const Header& header,
                const RmaDescriptor* descriptors) {
  RxTarget memory;
  int status = ResolveRma(ep, header, descriptors, FI_REMOTE_READ, &memory);
  auto answer = std::make_unique<TxEntry>();
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
      answer->payload = ep->rma_target;
    } else {
      answer->owned.resize(total);
      ssize_t copied = copier.CopyFromIov(
          answer->owned.data(), total, memory.iface, memory.device,
          ep->rma_target.data(), ep->rma_target.size(), 0);
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
  ep->connection->Send(std::move(answer));
}

}  // namespace

RxTarget TcpMsgEpEvents::OnHeader(const Header& header,
                                  const RmaDescriptor* descriptors) {
  TcpMsgEp* ep = ep_;
  switch (static_cast<Op>(header.op)) {
    case Op::kMsg: {
      if (ep->recvs.empty()) {
        // Resource management (fi_domain(3)): enabled, the message waits
        // for a receive; disabled, it is dropped and the sender's transmit
        // fails with FI_ENORX.
        if (!ResourceManaged(ep)) {
          ep->refused = true;
          return RxTarget{RxTarget::kDiscard};
        }
        return RxTarget{RxTarget::kStall};
      }
      ep->current_recv = std::move(ep->recvs.front());
      ep->recvs.pop_front();
      return UserTarget(ep, *ep->current_recv);
    }
    case Op::kTagged: {
      for (auto it = ep->tagged_recvs.begin(); it != ep->tagged_recvs.end();
           ++it) {
        if (TagMatches(**it, header.tag)) {
          ep->current_recv = std::move(*it);
          ep->tagged_recvs.erase(it);
          return UserTarget(ep, *ep->current_recv);
        }
      }
      if (ep->unexpected_bytes + header.size > kMaxUnexpectedBytes) {
        return RxTarget{RxTarget::kStall};
      }
      ep->current_unexpected.emplace();
      ep->current_unexpected->header = header;
      ep->current_unexpected->data.reserve(header.size);
      RxTarget target;
      target.kind = RxTarget::kBuffer;
      target.buffer = &ep->current_unexpected->data;
      return target;
    }
    case Op::kWrite: {
      RxTarget target;
      ep->rma_status =
          ResolveRma(ep, header, descriptors, FI_REMOTE_WRITE, &target);
      if (ep->rma_status != 0) return RxTarget{RxTarget::kDiscard};
      target.kind = RxTarget::kUser;
      target.capacity = header.size;
      return target;
    }
    case Op::kReadRequest:
      AnswerRead(ep, header, descriptors);
      return RxTarget{RxTarget::kDiscard};
    case Op::kReadResponse: {
      auto it = ep->awaiting.find(header.id);
      if (it == ep->awaiting.end() ||
          it->second->header.op != static_cast<uint8_t>(Op::kReadRequest)) {
        return ProtocolError(ep, "a read response for no read");
      }
      size_t expected = 0;
      for (const iovec& piece : it->second->read_iov) {
        expected += piece.iov_len;
      }
      if (header.size != (header.status == 0 ? expected : 0)) {
        return ProtocolError(ep, "a read response of the wrong length");
      }
      ep->current_read = std::move(it->second);
      ep->awaiting.erase(it);
      if (header.status != 0) return RxTarget{RxTarget::kDiscard};
      RxTarget target;
      target.kind = RxTarget::kUser;
      target.iov = ep->current_read->read_iov.data();
      target.iov_count = ep->current_read->read_iov.size();
      target.capacity = expected;
      target.iface = ep->current_read->read_iface;
      target.device = ep->current_read->read_device;
      return target;
    }
    case Op::kAck:
      if (ep->awaiting.count(header.id) == 0) {
        return ProtocolError(ep, "an answer to no request");
      }
      return RxTarget{RxTarget::kDiscard};
  }
  return ProtocolError(ep, "unknown opcode");
}

void TcpMsgEpEvents::OnMessageDone(const Header& header, size_t placed) {
  TcpMsgEp* ep = ep_;
  switch (static_cast<Op>(header.op)) {
    case Op::kMsg:
    case Op::kTagged:
      if (ep->refused) {
        ep->refused = false;
        FI_INFO(ep->log(), FI_LOG_EP_DATA,
                "no receive posted: message refused (FI_ENORX)\n");
        if (header.flags & kAckRequested) {
          SendAnswer(ep, Op::kAck, header.id, -FI_ENORX);
        }
        return;
      }
      if (ep->current_unexpected.has_value()) {
        ep->unexpected_bytes += header.size;
        ep->unexpected.push_back(std::move(*ep->current_unexpected));
        ep->current_unexpected.reset();
        return;
      }
      CompleteRecv(ep, std::move(ep->current_recv), header, placed);
      return;
    case Op::kWrite:
      SendAnswer(ep, Op::kAck, header.id, ep->rma_status);
      if (ep->rma_status != 0) return;
      if (ep->util.cntrs[kRemoteWriteCntr] != nullptr) {
        CntrAdd(ep->util.cntrs[kRemoteWriteCntr], 1);
      }
      if ((header.flags & kRemoteData) && ep->util.rx_cq != nullptr) {
        fi_cq_tagged_entry entry = {};
        entry.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
        entry.data = header.data;
        if (CqWrite(ep->util.rx_cq, entry) != 0) {
          FI_WARN(ep->log(), FI_LOG_CQ, "CQ full: remote CQ data lost\n");
        }
      }
      return;
    case Op::kReadRequest:
      return;
    case Op::kReadResponse:
      --ep->answers_pending;
      CompleteTx(ep, std::move(ep->current_read), -header.status);
      AfterAnswer(ep, header.status);
      return;
    case Op::kAck: {
      auto it = ep->awaiting.find(header.id);
      std::unique_ptr<TxEntry> entry = std::move(it->second);
      ep->awaiting.erase(it);
      --ep->answers_pending;
      CompleteTx(ep, std::move(entry), -header.status);
      AfterAnswer(ep, header.status);
      return;
    }
  }
}

void PostTaggedRecv(TcpMsgEp* ep, std::unique_ptr<PostedRecv> recv) {
  for (auto it = ep->unexpected.begin(); it != ep->unexpected.end(); ++it) {
    if (!TagMatches(*recv, it->header.tag)) continue;
    UnexpectedMsg message = std::move(*it);
    ep->unexpected.erase(it);
    ep->unexpected_bytes -= message.header.size;
    size_t placed = std::min(message.data.size(), recv->capacity);
    ssize_t copied = ep->util.domain->copier.CopyToIov(
        recv->iface, recv->device, recv->iov.data(), recv->iov.size(), 0,
        message.data.data(), placed);
    if (copied < 0) {
      fi_cq_tagged_entry entry = {};
      entry.op_context = recv->context;
      entry.flags = FI_RECV | FI_TAGGED;
      ReportError(&ep->util, ep->util.rx_cq, recv->reserved, entry,
                  static_cast<int>(-copied), 0, kRecvCntr);
      return;
    }
    CompleteRecv(ep, std::move(recv), message.header, placed);
    return;
  }
  ep->tagged_recvs.push_back(std::move(recv));
}

void CompleteTx(TcpMsgEp* ep, std::unique_ptr<TxEntry> entry, int error) {
  if (!entry->report) return;
  --ep->tx_outstanding;
  UtilEndpoint& util = ep->util;
  CntrKind cntr = static_cast<CntrKind>(entry->cntr);
  if (error == 0) {
    ReportSuccess(&util, util.tx_cq, entry->write_entry, entry->reserved,
                  entry->completion, FI_ADDR_NOTAVAIL, cntr);
  } else {
    ReportError(&util, util.tx_cq, entry->reserved, entry->completion, error,
                0, cntr);
  }
}

ssize_t PostTx(TcpMsgEp* ep, std::unique_ptr<TxEntry> entry) {
  if (ep->state != MsgEpState::kConnected || ep->connection->closed()) {
    FI_WARN(ep->log(), FI_LOG_EP_DATA, "transmit on an endpoint that is not "
                                       "connected\n");
    return -FI_ENOTCONN;
  }
  if (ep->tx_outstanding >= ep->util.info->tx_attr->size) return -FI_EAGAIN;
  if (entry->write_entry) {
    if (CqReserve(ep->util.tx_cq) != 0) return -FI_EAGAIN;
    entry->reserved = true;
  }
  entry->header.id = ep->next_id++;
  ++ep->tx_outstanding;
  if (!ep->fenced.empty() || (entry->fence && ep->answers_pending > 0)) {
    ep->fenced.push_back(std::move(entry));
    return 0;
  }
  if (entry->awaits_answer) ++ep->answers_pending;
  ep->connection->Send(std::move(entry));
  return 0;
}

}  // namespace tcp
}  // namespace fabric

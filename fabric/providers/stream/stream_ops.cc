// The calls of stream endpoints (fi_msg, fi_tagged, fi_rma, and fi_cancel;
// fi_atomic is in atomic.cc): each transmit or receive
// (util/data_path_ops.h makes one of every C entry point) is checked, then
// becomes a TxEntry or PostedRecv; the endpoint's owner picks the link.
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>

#include <mutex>

#include "fabric/api/core/status.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_calls.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/app_buffer.h"
#include "fabric/providers/util/endpoint_tables.h"

namespace fabric {
namespace stream {
namespace {

constexpr uint64_t kRxFlags = FI_COMPLETION | FI_MULTI_RECV | FI_MORE;
constexpr uint64_t kPeekFlags = FI_PEEK | FI_CLAIM | FI_DISCARD;

// Describe of the lists DescribeOneHostBuffer does not take.
ssize_t DescribeList(const StreamEp& ep, const iovec* iov, void** desc,
                     size_t count, size_t limit, AppBuffer* buffer,
                     size_t* length) {
  if (count > limit) {
    return FailOp(ep, FI_EINVAL, "more iov entries than iov_limit");
  }
  absl::StatusOr<size_t> described =
      DescribeAppBuffer(*ep.util.domain, iov, desc, count, buffer);
  if (!described.ok()) {
    return FailOp(ep, FI_EINVAL,
                  std::string(described.status().message()).c_str());
  }
  *length = *described;
  return 0;
}

// Describes and checks a local buffer list (at most `limit` pieces) into
// *buffer and its length into *length (any size_t: a receive buffer may
// be larger than SSIZE_MAX): 0, or a negative fi_errno (logged). Inline
// for the one host buffer of most calls.
inline ssize_t Describe(const StreamEp& ep, const iovec* iov, void** desc,
                        size_t count, size_t limit, AppBuffer* buffer,
                        size_t* length) {
  if (count <= limit && DescribeOneHostBuffer(*ep.util.domain, iov, desc, count,
                                              buffer, length)) {
    return 0;
  }
  return DescribeList(ep, iov, desc, count, limit, buffer, length);
}

// The message's payload: the application's buffers themselves when the
// kernel may read them directly, else a copy made through the domain's
// HMEM copy functions.
ssize_t TakePayload(StreamEp* ep, const AppBuffer& buffer, size_t length,
                    bool inject, TxEntry* entry) {
  const HmemCopier& copier = ep->util.domain->copier;
  if (!inject && DirectlyAccessible(copier, buffer)) {
    for (const AppBufferPiece& piece : buffer) {
      entry->payload.push_back(piece.iov);
    }
    return 0;
  }
  entry->owned.resize(length);
  ssize_t copied = GatherAppBuffer(copier, buffer, entry->owned.data(),
                                   entry->owned.size());
  if (copied < 0) return FailOp(*ep, static_cast<int>(-copied), "copying the "
                                                              "payload");
  entry->payload = {{entry->owned.data(), entry->owned.size()}};
  return 0;
}

// The header of a transmit of `total` payload bytes (RMA descriptors and
// the id come later).
Header MessageHeader(Op op, const TransmitCall& request, size_t total) {
  Header header = {};
  header.op = static_cast<uint8_t>(op);
  header.tag = request.tag;
  header.size = total;
  if (request.flags & FI_REMOTE_CQ_DATA) {
    header.flags |= kRemoteData;
    header.data = request.data;
  }
  return header;
}

// A message or tagged send's completion entry.
fi_cq_tagged_entry SendCompletion(Op op, const TransmitCall& request) {
  fi_cq_tagged_entry completion = {};
  completion.op_context = request.context;
  completion.flags = FI_SEND | (op == Op::kTagged ? FI_TAGGED : FI_MSG);
  return completion;
}

Op OpOf(TransmitCall::Kind kind) {
  switch (kind) {
    case TransmitCall::Kind::kMsg:
      return Op::kMsg;
    case TransmitCall::Kind::kTagged:
      return Op::kTagged;
    case TransmitCall::Kind::kRead:
      return Op::kReadRequest;
    case TransmitCall::Kind::kWrite:
      return Op::kWrite;
  }
  return Op::kMsg;
}

}  // namespace

ssize_t StreamCalls::Receive(fid_ep* ep_fid, const ReceiveCall& request) {
  StreamEp* ep = ToStreamEp(ep_fid);
  // A peek answers from what has arrived: first pull in the headers
  // waiting in every link's socket or ring (progress takes the endpoint's
  // lock itself).
  if (request.flags & FI_PEEK) ep->util.domain->progress->Run();
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  const fi_info& info = *ep->util.info;
  uint64_t allowed = kRxFlags | (request.tagged ? kPeekFlags : 0);
  if ((request.flags & ~allowed) != 0) {
    return FailOp(*ep, FI_EBADFLAGS,
                "unknown receive flags (FI_PEEK, FI_CLAIM and FI_DISCARD "
                "are for tagged receives)");
  }
  bool peek_or_claim = (request.flags & (FI_PEEK | FI_CLAIM)) != 0;
  if ((request.flags & FI_DISCARD) && !peek_or_claim) {
    return FailOp(*ep, FI_EINVAL, "FI_DISCARD needs FI_PEEK or FI_CLAIM");
  }
  if ((request.flags & FI_CLAIM) && request.context == nullptr) {
    return FailOp(*ep, FI_EINVAL, "FI_CLAIM needs a struct fi_context");
  }
  if (ep->peer_srx != nullptr) {
    return FailOp(*ep, FI_EOPNOTSUPP,
                  "the endpoint takes its receives from a shared receive "
                  "context: post them there");
  }
  if (!ep->util.enabled.load()) {
    return FailOp(*ep, FI_EOPBADSTATE, "the endpoint is not enabled");
  }
  AppBuffer buffer;
  size_t length = 0;
  if (ssize_t rc = Describe(*ep, request.iov, request.desc, request.count,
                            info.rx_attr->iov_limit, &buffer, &length);
      rc != 0) {
    return rc;
  }
  bool multi = (request.flags & FI_MULTI_RECV) != 0;
  if (multi && (request.tagged || request.count != 1)) {
    return FailOp(*ep, FI_EINVAL, "FI_MULTI_RECV takes one untagged buffer");
  }
  if (!peek_or_claim &&
      ep->recvs.size() + ep->tagged_recvs.size() >= info.rx_attr->size) {
    return -FI_EAGAIN;
  }
  std::unique_ptr<PostedRecv> recv = ep->spare_recvs.Take();
  recv->context = request.context;
  recv->flags = request.flags;
  recv->iov.assign(request.iov, request.iov + request.count);
  if (request.desc != nullptr) {
    recv->desc.assign(request.desc, request.desc + request.count);
  } else {
    recv->desc.assign(request.count, nullptr);
  }
  recv->capacity = length;
  if (!buffer.empty()) {
    recv->iface = buffer.front().iface;
    recv->device = buffer.front().device;
  }
  recv->tagged = request.tagged;
  recv->tag = request.tag;
  recv->ignore = request.ignore;
  recv->source = request.source;
  recv->write_entry = WantsRxEntry(ep->util, request.flags);
  if (recv->write_entry && !multi) {
    if (CqReserve(ep->util.rx_cq) != 0) return -FI_EAGAIN;
    recv->reserved = true;
  }
  if (peek_or_claim) return PeekOrClaim(ep, std::move(recv));
  if (request.tagged) {
    PostTaggedRecv(ep, std::move(recv));
  } else {
    PostUntaggedRecv(ep, std::move(recv));
  }
  if (ep->stalled_links > 0) ep->owner->ReceivePosted();
  return 0;
}

namespace {

// --- fi_cancel ---------------------------------------------------------------

// Cancels the receive posted with `context` (FI_ECANCELED), or -FI_ENOENT.
ssize_t Cancel(fid* object, void* context) {
  StreamEp* ep = ToStreamEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  auto cancel = [ep](std::unique_ptr<PostedRecv> recv) {
    fi_cq_tagged_entry entry = {};
    entry.op_context = recv->context;
    entry.flags = FI_RECV | (recv->tagged ? FI_TAGGED : FI_MSG);
    entry.tag = recv->tag;
    ReportError(&ep->util, ep->util.rx_cq, recv->reserved, entry,
                FI_ECANCELED, 0, kRecvCntr);
  };
  auto take = [&](auto& queue) {
    for (auto it = queue.begin(); it != queue.end(); ++it) {
      if ((*it)->context != context) continue;
      std::unique_ptr<PostedRecv> recv = std::move(*it);
      queue.erase(it);
      cancel(std::move(recv));
      return true;
    }
    return false;
  };
  return take(ep->recvs) || take(ep->tagged_recvs) ? 0 : -FI_ENOENT;
}

}  // namespace

ssize_t StreamCalls::Transmit(fid_ep* ep_fid, const TransmitCall& request) {
  StreamEp* ep = ToStreamEp(ep_fid);
  const Op op = OpOf(request.kind);
  const fi_addr_t dest = request.dest;
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  const fi_info& info = *ep->util.info;
  if (ssize_t rc = CheckTransmit(*ep, request.flags); rc != 0) return rc;
  AppBuffer buffer;
  size_t total = 0;
  if (ssize_t rc = Describe(*ep, request.iov, request.desc, request.count,
                            info.tx_attr->iov_limit, &buffer, &total);
      rc != 0) {
    return rc;
  }
  if ((request.flags & FI_INJECT) && total > info.tx_attr->inject_size) {
    return FailOp(*ep, FI_EINVAL, "inject of more than inject_size bytes");
  }
  if (total > info.ep_attr->max_msg_size) {
    return FailOp(*ep, FI_EMSGSIZE,
                  "a transfer of more than max_msg_size "
                  "bytes");
  }
  // Without resource management a send completes only when the target has
  // taken it, so that a missing receive can fail it with FI_ENORX.
  bool rm_disabled =
      ep->util.domain->info->domain_attr->resource_mgmt == FI_RM_DISABLED;
  bool awaits_answer =
      (request.flags & FI_DELIVERY_COMPLETE) || (rm_disabled && op == Op::kMsg);
  bool is_message = op == Op::kMsg || op == Op::kTagged;
  if (is_message && !awaits_answer && !(request.flags & FI_FENCE)) {
    bool write_entry =
        !request.inject_call && WantsTxEntry(ep->util, request.flags);
    ssize_t rc = SendNow(ep, dest, MessageHeader(op, request, total), buffer,
                         SendCompletion(op, request), write_entry);
    if (rc != kSendLater) return rc;
  }
  std::unique_ptr<TxEntry> entry = ep->spare_tx.Take();
  entry->header = MessageHeader(op, request, total);
  entry->completion = SendCompletion(op, request);
  Header& header = entry->header;
  fi_cq_tagged_entry& completion = entry->completion;
  bool is_rma = op == Op::kWrite || op == Op::kReadRequest;
  if (is_rma) {
    if (request.rma_count == 0 || request.rma_count > kMaxRmaCount ||
        request.rma_count > info.tx_attr->rma_iov_limit ||
        request.rma == nullptr) {
      return FailOp(*ep, FI_EINVAL, "rma_iov count outside 1..rma_iov_limit");
    }
    size_t remote_total = 0;
    for (size_t i = 0; i < request.rma_count; ++i) {
      entry->descriptors[i] = {request.rma[i].addr, request.rma[i].len,
                               request.rma[i].key};
      remote_total += request.rma[i].len;
    }
    if (remote_total != total) {
      return FailOp(*ep, FI_EINVAL, "local and remote RMA lengths differ");
    }
    header.rma_count = static_cast<uint16_t>(request.rma_count);
    entry->awaits_answer = true;  // the target's key check answers
  }
  if (op == Op::kReadRequest) {
    entry->read_iov.assign(request.iov, request.iov + request.count);
    if (!buffer.empty()) {
      entry->read_iface = buffer.front().iface;
      entry->read_device = buffer.front().device;
    }
    header.size = 0;
    completion.flags = FI_RMA | FI_READ;
    entry->cntr = kReadCntr;
  } else {
    if (ssize_t rc = TakePayload(ep, buffer, total, request.flags & FI_INJECT,
                                 entry.get());
        rc != 0) {
      return rc;
    }
    if (is_rma) completion.flags = FI_RMA | FI_WRITE;
    entry->cntr = is_rma ? kWriteCntr : kSendCntr;
  }
  if (awaits_answer) entry->awaits_answer = true;
  if (entry->awaits_answer && !is_rma) header.flags |= kAckRequested;
  return SendTx(ep, dest, std::move(entry), request.flags, request.inject_call);
}

ssize_t FailOp(const StreamEp& ep, int fi_errno, const char* what) {
  FI_WARN(ep.log(), FI_LOG_EP_DATA, "%s\n", what);
  return -fi_errno;
}

ssize_t CheckTransmit(const StreamEp& ep, uint64_t flags) {
  constexpr uint64_t kTxFlags = FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA |
                                FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
                                FI_DELIVERY_COMPLETE | FI_FENCE | FI_MORE;
  if ((flags & ~kTxFlags) != 0) {
    return FailOp(ep, FI_EBADFLAGS, "unknown transmit flags");
  }
  if (!ep.util.enabled.load()) {
    return FailOp(ep, FI_EOPBADSTATE, "the endpoint is not enabled");
  }
  return 0;
}

ssize_t SendTx(StreamEp* ep, fi_addr_t dest, std::unique_ptr<TxEntry> entry,
               uint64_t flags, bool inject_call) {
  entry->fence = (flags & FI_FENCE) != 0;
  entry->write_entry = !inject_call && WantsTxEntry(ep->util, flags);
  int error = 0;
  Link* link = ep->owner->LinkFor(dest, &error);
  if (link == nullptr) return error;
  return PostTx(link, std::move(entry));
}

fi_ops_ep kStreamEpOps = UtilEndpointOps(Cancel);

fi_ops_msg kStreamMsgOps = MsgOps<StreamCalls>();
fi_ops_tagged kStreamTaggedOps = TaggedOps<StreamCalls>();
fi_ops_rma kStreamRmaOps = RmaOps<StreamCalls>();

int BindStreamEp(fid* object, fid* bound, uint64_t flags) {
  StreamEp* ep = FidCast<StreamEp>(object);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (PeerSrx* srx = AsPeerSrx(bound); srx != nullptr) {
    return BindPeerSrx(ep, srx, flags);
  }
  if (SharedRx* srx = AsSharedRx(bound); srx != nullptr) {
    return BindPeerSrx(ep, &srx->peer, flags);
  }
  if (SharedTx* stx = AsSharedTx(bound); stx != nullptr) {
    return BindSharedTx(ep, stx, flags);
  }
  return BindUtilEndpoint(&ep->util, bound, flags);
}

void InstallDataPathOps(StreamEp* ep, const fi_info& info, fi_ops_cm* cm) {
  InstallEndpointTables(&ep->util.ep_fid, {.ops = &kStreamEpOps,
                                           .cm = cm,
                                           .msg = &kStreamMsgOps,
                                           .tagged = &kStreamTaggedOps,
                                           .rma = &kStreamRmaOps,
                                           .atomic = &kStreamAtomicOps});
  ep->directed_recv = (info.caps & FI_DIRECTED_RECV) != 0;
  ep->source_err = (info.caps & FI_SOURCE_ERR) != 0;
}

}  // namespace stream
}  // namespace fabric

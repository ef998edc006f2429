#include "fabric/providers/verbs/verbs_work_requests.h"

#include <arpa/inet.h>
#include <rdma/fi_errno.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace verbs {
namespace {

bool IsRemote(SendOp::Kind kind) {
  return kind == SendOp::kWrite || kind == SendOp::kRead ||
         kind == SendOp::kAtomic;
}

absl::Status Invalid(absl::string_view what) {
  return FiError(FI_EINVAL, what);
}

}  // namespace

absl::Status BuildSendWr(const SendOp& op, ibv_send_wr* wr) {
  if (op.with_data) {
    if (op.kind == SendOp::kRead) {
      return Invalid("remote CQ data on a read");
    }
    if (op.kind == SendOp::kAtomic) {
      // A valid request this provider does not carry (libfabric's verbs
      // neither): an RC atomic has no immediate data.
      return FiError(FI_EOPNOTSUPP, "remote CQ data on an atomic (verbs "
                                    "atomics carry no immediate data)");
    }
    if (op.data >> (8 * kCqDataSize) != 0) {
      return Invalid(absl::StrCat("remote CQ data 0x", absl::Hex(op.data),
                                  " is wider than ", kCqDataSize, " bytes"));
    }
  }
  if (op.inject && op.kind != SendOp::kSend && op.kind != SendOp::kWrite) {
    return Invalid("inject of a read or atomic");
  }
  if (IsRemote(op.kind) && op.rkey > UINT32_MAX) {
    return Invalid(absl::StrCat("key 0x", absl::Hex(op.rkey),
                                " is wider than 32 bits"));
  }
  wr->send_flags = (op.signaled ? IBV_SEND_SIGNALED : 0) |
                   (op.inject ? IBV_SEND_INLINE : 0) |
                   (op.fence ? IBV_SEND_FENCE : 0);
  // Immediate data goes in network order (ibv_post_send(3)).
  wr->imm_data = op.with_data ? htonl(static_cast<uint32_t>(op.data)) : 0;
  switch (op.kind) {
    case SendOp::kSend:
      wr->opcode = op.with_data ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
      return absl::OkStatus();
    case SendOp::kWrite:
    case SendOp::kRead:
      wr->opcode = op.kind == SendOp::kRead ? IBV_WR_RDMA_READ
                   : op.with_data           ? IBV_WR_RDMA_WRITE_WITH_IMM
                                            : IBV_WR_RDMA_WRITE;
      wr->wr.rdma.remote_addr = op.remote_addr;
      wr->wr.rdma.rkey = static_cast<uint32_t>(op.rkey);
      return absl::OkStatus();
    case SendOp::kAtomic: {
      bool compare = op.op == FI_CSWAP;
      AtomicKind kind = compare    ? AtomicKind::kCompare
                        : op.fetch ? AtomicKind::kFetch
                                   : AtomicKind::kWrite;
      if (AtomicCount(op.datatype, op.op, kind, true) != 1) {
        return FiError(FI_EOPNOTSUPP,
                       absl::StrCat("atomic op ", op.op, " on datatype ",
                                    op.datatype, " (verbs: 64-bit sums, "
                                    "reads and compare-and-swaps)"));
      }
      if (op.remote_addr % 8 != 0) {
        return Invalid(absl::StrCat("atomic on address 0x",
                                    absl::Hex(op.remote_addr),
                                    ", not 8-byte aligned"));
      }
      wr->opcode = compare ? IBV_WR_ATOMIC_CMP_AND_SWP
                           : IBV_WR_ATOMIC_FETCH_AND_ADD;
      wr->wr.atomic.remote_addr = op.remote_addr;
      wr->wr.atomic.rkey = static_cast<uint32_t>(op.rkey);
      // Fetch-and-add adds compare_add; compare-and-swap compares with it
      // and swaps in `swap`. A read adds 0.
      wr->wr.atomic.compare_add =
          compare ? op.compare : op.op == FI_ATOMIC_READ ? 0 : op.operand;
      wr->wr.atomic.swap = compare ? op.operand : 0;
      return absl::OkStatus();
    }
  }
  return Invalid("unknown operation");
}

uint64_t CompletionFlagsOf(const SendOp& op) {
  switch (op.kind) {
    case SendOp::kSend:
      return FI_SEND | FI_MSG;
    case SendOp::kWrite:
      return FI_RMA | FI_WRITE;
    case SendOp::kRead:
      return FI_RMA | FI_READ;
    case SendOp::kAtomic:
      return FI_ATOMIC | (op.fetch ? FI_READ : FI_WRITE);
  }
  return 0;
}

int AtomicCount(int datatype, int op, AtomicKind kind, bool device_atomics) {
  if (!device_atomics || (datatype != FI_INT64 && datatype != FI_UINT64)) {
    return -FI_EOPNOTSUPP;
  }
  bool supported = kind == AtomicKind::kCompare ? op == FI_CSWAP
                   : kind == AtomicKind::kFetch
                       ? op == FI_SUM || op == FI_ATOMIC_READ
                       : op == FI_SUM;
  return supported ? 1 : -FI_EOPNOTSUPP;
}

absl::StatusOr<ibv_qp_cap> QpCaps(const fi_tx_attr& tx, const fi_rx_attr& rx,
                                  const ibv_device_attr& device,
                                  uint32_t max_inline) {
  struct Limit {
    const char* what;
    size_t asked;
    uint64_t device;
  };
  const Limit limits[] = {
      {"tx_attr->size", tx.size, static_cast<uint64_t>(device.max_qp_wr)},
      {"rx_attr->size", rx.size, static_cast<uint64_t>(device.max_qp_wr)},
      {"tx_attr->iov_limit", tx.iov_limit,
       static_cast<uint64_t>(device.max_sge)},
      {"rx_attr->iov_limit", rx.iov_limit,
       static_cast<uint64_t>(device.max_sge)},
      {"tx_attr->inject_size", tx.inject_size, max_inline},
  };
  for (const Limit& limit : limits) {
    if (limit.asked > limit.device) {
      return Invalid(absl::StrCat(limit.what, " ", limit.asked,
                                  " exceeds the device's ", limit.device));
    }
  }
  ibv_qp_cap cap = {};
  // A queue needs room for one request at least, whatever was asked.
  cap.max_send_wr = static_cast<uint32_t>(std::max<size_t>(tx.size, 1));
  cap.max_recv_wr = static_cast<uint32_t>(std::max<size_t>(rx.size, 1));
  cap.max_send_sge = static_cast<uint32_t>(std::max<size_t>(tx.iov_limit, 1));
  cap.max_recv_sge = static_cast<uint32_t>(std::max<size_t>(rx.iov_limit, 1));
  cap.max_inline_data = static_cast<uint32_t>(tx.inject_size);
  return cap;
}

}  // namespace verbs
}  // namespace fabric

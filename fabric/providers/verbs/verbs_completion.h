// File: fabric/providers/verbs/verbs_completion.h
//
// From an RC queue pair's work completions (ibv_wc) to fi_cq entries: pure
// functions, tested with made-up completions.
//
// Each posted work request carries, as its wr_id, a WorkRequest the
// endpoint keeps until the completion: the application's context and what
// the entry reports that the ibv_wc does not say (the operation posted,
// the receive buffer).
//
//   ibv_wc wc;  // from ibv_poll_cq
//   auto* request = reinterpret_cast<WorkRequest*>(wc.wr_id);
//   if (wc.status == IBV_WC_SUCCESS) {
//     fi_cq_tagged_entry entry = CompletionOf(wc, *request);
//   } else {
//     fi_cq_err_entry error = ErrorOf(wc, *request);
//   }
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_COMPLETION_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_COMPLETION_H_

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>
#include <stdint.h>

namespace fabric {
namespace verbs {

struct WorkRequest {
  void* context = nullptr;  // the operation's op_context
  // The entry's flags: FI_SEND | FI_MSG, FI_RMA | FI_WRITE, FI_RMA |
  // FI_READ, FI_ATOMIC | FI_READ, FI_RECV | FI_MSG.
  uint64_t flags = 0;
  void* buf = nullptr;      // a receive's buffer (first piece)
  bool write_entry = true;  // an entry on success (FI_SELECTIVE_COMPLETION)
};

// The positive fi_errno of a failed completion's status (enum
// ibv_wc_status); FI_EIO for a status it does not know.
int ErrnoOfStatus(int status);

// The entry of a successful completion `wc` of `request`. Receives report
// the bytes placed (byte_len), the buffer, and with IBV_WC_WITH_IMM the
// sender's remote CQ data (FI_REMOTE_CQ_DATA; immediate data travels in
// network order). A remote write with immediate data consumes a posted
// receive (the FI_RX_CQ_DATA mode): FI_RMA | FI_REMOTE_WRITE |
// FI_REMOTE_CQ_DATA with that receive's context and length 0.
// Inline: every completion takes it.
inline fi_cq_tagged_entry CompletionOf(const ibv_wc& wc,
                                       const WorkRequest& request) {
  fi_cq_tagged_entry entry = {};
  entry.op_context = request.context;
  entry.flags = request.flags;
  if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
    entry.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
    entry.data = ntohl(wc.imm_data);
    return entry;
  }
  if (wc.opcode & IBV_WC_RECV) {
    entry.len = wc.byte_len;
    entry.buf = request.buf;
    if (wc.wc_flags & IBV_WC_WITH_IMM) {
      entry.flags |= FI_REMOTE_CQ_DATA;
      entry.data = ntohl(wc.imm_data);
    }
  }
  return entry;
}

// The error entry of a failed completion: the request's context, flags and
// buffer (only wr_id, status and vendor_err of a failed ibv_wc are valid),
// err from ErrnoOfStatus, prov_errno the ibv_wc_status.
fi_cq_err_entry ErrorOf(const ibv_wc& wc, const WorkRequest& request);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_COMPLETION_H_

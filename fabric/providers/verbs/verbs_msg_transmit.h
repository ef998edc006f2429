// File: fabric/providers/verbs/verbs_msg_transmit.h
//
// What the verbs MSG endpoint's transmit calls share (verbs_msg_ops.cc:
// fi_msg and fi_rma; verbs_msg_atomic.cc: fi_atomic): a transmit as the
// call describes it, posting it as a work request, and refusing a call.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_MSG_TRANSMIT_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_MSG_TRANSMIT_H_

#include <rdma/fi_atomic.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_work_requests.h"

namespace fabric {
namespace verbs {

// A transmit as the application's call describes it.
struct Transmit {
  SendOp op;
  const iovec* iov = nullptr;  // the local buffers (none for atomics)
  void* const* desc = nullptr;
  size_t count = 0;
  size_t rma_count = 1;  // remote pieces of RMA and atomics
  // Atomics: where the old value goes (fetching calls), and its region.
  void* result = nullptr;
  void* result_desc = nullptr;
  void* context = nullptr;
  uint64_t flags = 0;  // the call's, or the endpoint's op_flags
  // fi_inject, fi_injectdata, fi_inject_write(data), fi_inject_atomic:
  // no completion entry at all (the FI_INJECT flag of other calls only
  // lets the buffer be reused at once).
  bool inject_call = false;
};

// Checks `tx` and posts it on the endpoint's queue pair: 0, -FI_EAGAIN
// when the queue or the CQ is full, or the refusal (FailDataCall).
ssize_t PostTransmit(VerbsMsgEp* ep, Transmit tx);

// A data call refused: `status` logged on the endpoint's log
// (FI_LOG_EP_DATA), and its negative fi_errno.
ssize_t FailDataCall(const VerbsMsgEp& ep, const absl::Status& status);
ssize_t FailDataCall(const VerbsMsgEp& ep, int fi_errno,
                     const std::string& what);

// fi_atomic of the MSG endpoint (verbs_msg_atomic.cc).
extern fi_ops_atomic kVerbsAtomicOps;

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_MSG_TRANSMIT_H_

// File: fabric/providers/verbs/verbs_msg_one_buffer.h
//
// The MSG endpoint's calls of one buffer (fi_send, fi_inject, fi_senddata,
// fi_injectdata, fi_recv, and fi_sendv / fi_recvv of one piece) in their
// common case: a connected endpoint, the endpoint's default flags, bytes
// that go inline or a buffer with a live descriptor. They are posted with one
// scatter-gather entry on the stack, without the general path's descriptions
// (verbs_msg_ops.cc); every other case, errors included, is left to the general
// path, which checks and reports it.
//
//   ssize_t rc;
//   if (TrySendOneBuffer(ep, message, &rc)) return rc;
//   return PostTransmit(ep, ...);  // the general path
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_MSG_ONE_BUFFER_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_MSG_ONE_BUFFER_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fabric/providers/verbs/verbs_msg_ep.h"

namespace fabric {
namespace verbs {

// A send of one buffer as fi_send, fi_senddata, fi_inject and
// fi_injectdata give it.
struct OneBufferSend {
  const void* buf = nullptr;
  size_t len = 0;
  void* desc = nullptr;
  void* context = nullptr;
  // The endpoint's op_flags, or FI_INJECT; FI_REMOTE_CQ_DATA sends `data`
  // as immediate data.
  uint64_t flags = 0;
  uint64_t data = 0;
  bool inject_call = false; // fi_inject(data): no completion entry at all
};

// Posts `send` when it is the common case: true, with *rc the result (0,
// or -FI_EAGAIN when the queue or the CQ is full, or the device's
// refusal). False when the general path must take it.
bool TrySendOneBuffer(VerbsMsgEp* ep, const OneBufferSend& send,
                      ssize_t* rc);

// Posts the receive of `buf` likewise.
bool TryReceiveOneBuffer(VerbsMsgEp* ep, void* buf, size_t len, void* desc,
                         void* context, ssize_t* rc);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_MSG_ONE_BUFFER_H_

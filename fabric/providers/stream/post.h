// File: fabric/providers/stream/post.h
//
// What the transmit calls of stream endpoints share (stream_ops.cc: fi_msg
// and fi_tagged; rma.cc: fi_rma): a transmit as the call describes it, and
// posting it on the link the endpoint's owner picks.
#ifndef FABRIC_PROVIDERS_STREAM_POST_H_
#define FABRIC_PROVIDERS_STREAM_POST_H_

#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

#include "fabric/providers/stream/wire.h"

namespace fabric {
namespace stream {

struct TxRequest {
  Op op;
  const iovec* iov;
  void** desc;
  size_t count;
  const fi_rma_iov* rma = nullptr;
  size_t rma_count = 0;
  uint64_t data = 0;
  uint64_t tag = 0;
  void* context = nullptr;
  uint64_t flags = 0;
  bool inject_call = false;  // fi_inject & co.: no completion entry
};

// Checks `request` and posts it to `dest`: 0, -FI_EAGAIN when no room is
// left, or the refusal (logged).
ssize_t Transmit(fid_ep* ep_fid, fi_addr_t dest, const TxRequest& request);

// The endpoint's default transmit flags (fi_endpoint's op_flags).
uint64_t TxFlags(fid_ep* ep);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_POST_H_

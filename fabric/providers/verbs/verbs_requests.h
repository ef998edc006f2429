// File: fabric/providers/verbs/verbs_requests.h
//
// What an RC endpoint hands to the device, from what the application
// passed: memory access flags of a registration, the scatter-gather list
// of a work request, and the private data of connection requests. Pure
// functions, tested here without a device.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_REQUESTS_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_REQUESTS_H_

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fabric {
namespace verbs {

// What fi_mr_desc returns for a verbs region: the key work requests name
// it by.
struct RegionDesc {
  uint32_t lkey = 0;
};

// The ibv_access_flags of a region registered with fi_mr_reg's `access`
// (FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE).
// The device writes into regions that receive (FI_RECV), that a read's
// data lands in (FI_READ) and that remote writes reach (a remote write
// needs local write too); remote writers may use atomics too when the
// device has them (`atomics`).
int AccessOf(uint64_t access, bool atomics);

// Fills sge[0..count) from the application's buffers. With
// `descs_required` (FI_MR_LOCAL, not an inline send) every piece needs its
// region's descriptor; otherwise a piece without one gets lkey 0 (an
// inline send's bytes are copied at post time and use no key; the caller
// registers the others). FI_EINVAL for more pieces than `max_sge`, a NULL
// iov or base, a missing descriptor, or a piece of 2^32 bytes or more.
absl::Status GatherSges(const iovec* iov, void* const* desc, size_t count,
                        size_t max_sge, bool descs_required, ibv_sge* sge);

// Connection private data. The InfiniBand CM (and RoCE's) carries at most
// 56 bytes of it with a connect (REQ), 196 with an accept (REP) and 148
// with a reject (REJ), and pads it: the receiver sees the whole field. So
// one byte in front says how much is the application's: fi_connect,
// fi_accept and fi_reject take up to kCmDataSize bytes.
inline constexpr size_t kConnectPrivateData = 56;
inline constexpr size_t kCmDataSize = kConnectPrivateData - 1;

// The private data for `len` (<= kCmDataSize) bytes at `data`.
std::vector<uint8_t> PackCmData(const void* data, size_t len);
// The application's bytes in received private data (nothing when there is
// none). FI_EINVAL when the length byte claims more than arrived.
absl::StatusOr<std::vector<uint8_t>> UnpackCmData(const void* private_data,
                                                  size_t len);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_REQUESTS_H_

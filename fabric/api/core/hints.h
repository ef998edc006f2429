// File: fabric/api/core/hints.h
//
// The attribute rules of fi_getinfo(3), applied the same way to every
// provider: validation of the application's hints, and matching of one
// provider candidate against them.
//
// A provider describes a candidate with an fi_info (its capabilities, limits
// and default settings) plus an AttrSupport (which settings it can switch to).
// MatchHints either builds the fi_info the application receives (output values
// >= requested, caps as requested, modes cleared) or says, in one line, which
// hint the candidate does not meet:
//
//   absl::StatusOr<InfoPtr> out = MatchHints(candidate, support, hints, version);
//   if (!out.ok()) log(out.status().message());  // "ep_type FI_EP_DGRAM not supported"
#ifndef FABRIC_API_CORE_HINTS_H_
#define FABRIC_API_CORE_HINTS_H_

#include <rdma/fabric.h>

#include <stdint.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/core/info.h"

namespace fabric {

// Capability groups of fi_getinfo(3).
inline constexpr uint64_t kPrimaryCaps =
    FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST | FI_NAMED_RX_CTX |
    FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_HMEM | FI_COLLECTIVE |
    FI_XPU_TRIGGER;
inline constexpr uint64_t kMsgModifiers = FI_SEND | FI_RECV;
inline constexpr uint64_t kRmaModifiers =
    FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr uint64_t kPrimaryModifiers = kMsgModifiers | kRmaModifiers;
inline constexpr uint64_t kSecondaryCaps =
    FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_SHARED_AV | FI_TRIGGER |
    FI_FENCE | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SOURCE_ERR | FI_RMA_PMEM |
    FI_AV_USER_ID | FI_PEER;
inline constexpr uint64_t kAllCaps =
    kPrimaryCaps | kPrimaryModifiers | kSecondaryCaps;
// Secondary caps that cost performance, so they are reported only when asked.
inline constexpr uint64_t kCostlySecondaryCaps =
    FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT | FI_AV_USER_ID | FI_PEER |
    FI_SHARED_AV | FI_TRIGGER | FI_RMA_PMEM;
// Domain capabilities are all secondary.
inline constexpr uint64_t kDomainCaps =
    FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV;

inline constexpr uint64_t kTxOpFlags =
    FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
    FI_DELIVERY_COMPLETE | FI_COMMIT_COMPLETE | FI_FENCE | FI_MORE |
    FI_MULTICAST | FI_REMOTE_CQ_DATA;
inline constexpr uint64_t kRxOpFlags = FI_COMPLETION | FI_MULTI_RECV;

// The bit for enum value `v` in the masks of AttrSupport.
constexpr uint32_t Bit(int v) { return 1u << v; }

// Which settings a candidate can take besides its defaults.
struct AttrSupport {
  uint32_t threading = 0;      // Bit(FI_THREAD_*)
  uint32_t progress = 0;       // Bit(FI_PROGRESS_*), control and data alike
  uint32_t resource_mgmt = 0;  // Bit(FI_RM_*)
  uint32_t av_types = 0;       // Bit(FI_AV_*)
  int mr_mode_required = 0;    // FI_MR_* bits the application must accept
  int mr_mode_optional = 0;    // FI_MR_* bits used when the application offers
  uint64_t tx_op_flags = 0;    // op_flags the transmit side accepts
  uint64_t rx_op_flags = 0;    // op_flags the receive side accepts
  size_t max_auth_key_size = 0;
  bool traffic_class = false;  // tclass honoured
};

// Rejects malformed hints: unknown enum values or capability bits, addresses
// without lengths, FI_SHARED_CONTEXT misuse. FI_EINVAL / FI_EBADFLAGS status
// that names the field. `hints` may be null.
absl::Status ValidateHints(const fi_info* hints, uint32_t version);

// The fi_info the application receives for `candidate`, or an FI_ENODATA
// status whose message names the first hint the candidate cannot meet.
absl::StatusOr<InfoPtr> MatchHints(const fi_info& candidate,
                                   const AttrSupport& support,
                                   const fi_info* hints, uint32_t version);

// True when the application's prov_name hint selects provider `name`. A hint
// may list layered names ("tcp;ofi_rxm"); our providers implement libfabric's
// utility layers (ofi_rxm, ofi_rxd) natively, so those names are ignored.
bool ProviderNameMatches(const char* hint_prov_name, const char* name);

}  // namespace fabric

#endif  // FABRIC_API_CORE_HINTS_H_

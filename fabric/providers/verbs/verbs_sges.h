// File: fabric/providers/verbs/verbs_sges.h
//
// The scatter-gather lists of work requests, from the application's
// buffers: each piece with its memory region's key, descriptors checked
// live first (an application's garbage is refused, not dereferenced), and
// on a domain without FI_MR_LOCAL the pieces without a usable descriptor
// registered through the domain's cache, held until the request completes.
// Shared by the MSG (RC) and datagram (UD) endpoints.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_SGES_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_SGES_H_

#include <infiniband/verbs.h>
#include <sys/uio.h>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "fabric/providers/util/mr.h"
#include "fabric/providers/verbs/verbs_domain.h"

namespace fabric {
namespace verbs {

using Sges = absl::InlinedVector<ibv_sge, 4>;

// Fills sge[0..count) for a request's local pieces (`device_writes`: the
// device writes into them), at most `max_sge`. Descriptors are checked
// through `regions` (or LiveRegion when null). On a domain without
// FI_MR_LOCAL (`registers_buffers`) a descriptor is not needed and one that
// is not a region's is ignored (fi_mr(3)): pieces without a usable one are
// registered, held by `held`. Inline sends (`inline_data`) need no keys.
absl::Status DescribePieces(VerbsDomain* domain, bool registers_buffers,
                            LiveRegionCache* regions, const iovec* iov,
                            void* const* desc, size_t count, size_t max_sge,
                            bool inline_data, bool device_writes,
                            LocalRegistrations* held, ibv_sge* sge);

// The scatter-gather list of a receive into `count` pieces (at most
// `max_sge`; cut so that together they take at most `max_msg_size`), as
// DescribePieces fills it.
absl::Status DescribeReceive(VerbsDomain* domain, bool registers_buffers,
                             LiveRegionCache* regions, const iovec* iov,
                             void* const* desc, size_t count, size_t max_sge,
                             size_t max_msg_size, LocalRegistrations* held,
                             Sges* sges);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_SGES_H_

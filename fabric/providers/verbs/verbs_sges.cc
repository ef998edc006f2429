#include "fabric/providers/verbs/verbs_sges.h"

#include <rdma/fi_errno.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/verbs/verbs_requests.h"

namespace fabric {
namespace verbs {

absl::Status DescribePieces(VerbsDomain* domain, bool registers_buffers,
                            LiveRegionCache* regions, const iovec* iov,
                            void* const* desc, size_t count, size_t max_sge,
                            bool inline_data, bool device_writes,
                            LocalRegistrations* held, ibv_sge* sge) {
  if (inline_data) {
    // The device copies the bytes at post time: no key, and descriptors
    // are not read.
    return GatherSges(iov, nullptr, count, max_sge, false, sge);
  }
  if (count > max_sge) {
    return FiError(FI_EINVAL, absl::StrCat(count, " pieces; the queue pair "
                                           "takes at most ", max_sge));
  }
  absl::InlinedVector<void*, 4> usable(count, nullptr);
  for (size_t i = 0; desc != nullptr && i < count; ++i) {
    if (desc[i] == nullptr) continue;
    if (regions != nullptr ? regions->IsLive(desc[i])
                           : LiveRegion(desc[i]) != nullptr) {
      usable[i] = desc[i];
    } else if (!registers_buffers) {
      return FiError(FI_EINVAL, absl::StrCat("desc[", i, "] is not an open "
                                             "memory region"));
    }
  }
  FABRIC_RETURN_IF_ERROR(GatherSges(iov, usable.data(), count, max_sge,
                                    !registers_buffers, sge));
  for (size_t i = 0; registers_buffers && i < count; ++i) {
    if (usable[i] != nullptr) continue;
    RegionDesc registered;
    FABRIC_RETURN_IF_ERROR(
        held->Add(domain, iov[i], device_writes, &registered));
    sge[i].lkey = registered.lkey;
  }
  return absl::OkStatus();
}


absl::Status DescribeReceive(VerbsDomain* domain, bool registers_buffers,
                             LiveRegionCache* regions, const iovec* iov,
                             void* const* desc, size_t count, size_t max_sge,
                             size_t max_msg_size, LocalRegistrations* held,
                             Sges* sges) {
  if (count > 0 && iov == nullptr) {
    return FiError(FI_EINVAL, "fi_recv: the iov array is NULL");
  }
  // No message is longer than max_msg_size: a larger buffer is taken as
  // that much (the device's lengths have 32 bits, and on a domain without
  // FI_MR_LOCAL only what may be written is registered).
  absl::InlinedVector<iovec, 4> pieces;
  size_t room = max_msg_size;
  for (size_t i = 0; i < std::min(count, max_sge); ++i) {
    iovec piece = iov[i];
    piece.iov_len = std::min(piece.iov_len, room);
    room -= piece.iov_len;
    pieces.push_back(piece);
  }
  sges->resize(pieces.size());
  return DescribePieces(domain, registers_buffers, regions, pieces.data(),
                        desc, count, max_sge, false, true, held,
                        sges->data());
}

}  // namespace verbs
}  // namespace fabric

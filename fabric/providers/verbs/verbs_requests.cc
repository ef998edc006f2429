#include "fabric/providers/verbs/verbs_requests.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace verbs {

int AccessOf(uint64_t access, bool atomics) {
  int flags = 0;
  if (access & (FI_RECV | FI_READ | FI_REMOTE_WRITE)) {
    flags |= IBV_ACCESS_LOCAL_WRITE;
  }
  if (access & FI_REMOTE_READ) flags |= IBV_ACCESS_REMOTE_READ;
  if (access & FI_REMOTE_WRITE) {
    flags |= IBV_ACCESS_REMOTE_WRITE;
    if (atomics) flags |= IBV_ACCESS_REMOTE_ATOMIC;
  }
  return flags;
}

absl::Status GatherSges(const iovec* iov, void* const* desc, size_t count,
                        size_t max_sge, bool descs_required, ibv_sge* sge) {
  if (count > max_sge) {
    return FiError(FI_EINVAL, absl::StrCat(count,
                                           " pieces; the queue pair "
                                           "takes at most ",
                                           max_sge));
  }
  if (count > 0 && iov == nullptr) {
    return FiError(FI_EINVAL, "the iov array is NULL");
  }
  for (size_t i = 0; i < count; ++i) {
    if (iov[i].iov_base == nullptr && iov[i].iov_len > 0) {
      return FiError(FI_EINVAL, absl::StrCat("iov[", i, "] has a NULL base"));
    }
    if (iov[i].iov_len > UINT32_MAX) {
      return FiError(FI_EINVAL,
                     absl::StrCat("iov[", i, "] is longer than 2^32-1 bytes"));
    }
    const auto* region =
        desc != nullptr ? static_cast<const RegionDesc*>(desc[i]) : nullptr;
    if (region == nullptr && descs_required) {
      return FiError(FI_EINVAL,
                     absl::StrCat("iov[", i,
                                  "] has no descriptor (FI_MR_LOCAL: "
                                  "register it and pass fi_mr_desc)"));
    }
    sge[i].addr = reinterpret_cast<uint64_t>(iov[i].iov_base);
    sge[i].length = static_cast<uint32_t>(iov[i].iov_len);
    sge[i].lkey = region != nullptr ? region->lkey : 0;
  }
  return absl::OkStatus();
}

std::vector<uint8_t> PackCmData(const void* data, size_t len) {
  if (len > kCmDataSize) len = kCmDataSize;  // the caller checked
  std::vector<uint8_t> packed(1 + len);
  packed[0] = static_cast<uint8_t>(len);
  if (len > 0) memcpy(packed.data() + 1, data, len);
  return packed;
}

absl::StatusOr<std::vector<uint8_t>> UnpackCmData(const void* private_data,
                                                  size_t len) {
  if (private_data == nullptr || len == 0) return std::vector<uint8_t>();
  const auto* bytes = static_cast<const uint8_t*>(private_data);
  size_t claimed = bytes[0];
  if (claimed > len - 1) {
    return FiError(FI_EINVAL, absl::StrCat("connection data claims ", claimed,
                                           " bytes; ", len - 1, " arrived"));
  }
  return std::vector<uint8_t>(bytes + 1, bytes + 1 + claimed);
}

}  // namespace verbs
}  // namespace fabric

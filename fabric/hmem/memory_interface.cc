#include "fabric/hmem/memory_interface.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/log.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/hmem/cuda_driver.h"

namespace fabric {
namespace {

int SystemCopy(uint64_t device, void* dest, const void* src, size_t size) {
  memcpy(dest, src, size);
  return 0;
}

// Handed out only once the driver has loaded.
int CudaCopy(uint64_t device, void* dest, const void* src, size_t size) {
  return CudaDriver::Get().value()->Copy(device, dest, src, size);
}

absl::StatusOr<HmemCopyFunction> CudaCopyFunction() {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (driver.ok()) return &CudaCopy;
  static std::once_flag warned;
  std::call_once(warned, [&driver] {
    FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "cannot copy CUDA memory: %s\n",
                    std::string(driver.status().message()).c_str());
  });
  return driver.status();
}

}  // namespace

absl::StatusOr<HmemCopyFunction> HmemCopyFunctionOf(enum fi_hmem_iface iface) {
  int value = EnumValue(iface);
  switch (value) {
    case FI_HMEM_SYSTEM:
      return &SystemCopy;
    case FI_HMEM_CUDA:
      return CudaCopyFunction();
    case FI_HMEM_ROCR:
    case FI_HMEM_ZE:
    case FI_HMEM_NEURON:
    case FI_HMEM_SYNAPSEAI:
      return FiError(FI_ENOSYS,
                     absl::StrCat("fi_hmem_iface ", value,
                                  " is not implemented"));
    default:
      return FiError(FI_EINVAL, absl::StrCat("unknown fi_hmem_iface ", value));
  }
}

bool HmemIfaceAvailable(enum fi_hmem_iface iface) {
  switch (EnumValue(iface)) {
    case FI_HMEM_SYSTEM:
      return true;
    case FI_HMEM_CUDA:
      return CudaDriver::Get().ok();
    default:
      return false;
  }
}

enum fi_hmem_iface HmemIfaceOf(const void* ptr) {
  absl::StatusOr<const CudaDriver*> cuda = CudaDriver::Get();
  if (cuda.ok() && (*cuda)->IsDeviceMemory(ptr)) return FI_HMEM_CUDA;
  return FI_HMEM_SYSTEM;
}

}  // namespace fabric

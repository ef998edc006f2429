#include "fabric/hmem/cuda_driver.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <rdma/fi_errno.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/log.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

constexpr char kLibrary[] = "libcuda.so.1";

template <typename Function>
absl::Status Resolve(void* library, const char* name, Function*& function) {
  function = reinterpret_cast<Function*>(dlsym(library, name));
  if (function == nullptr) {
    return FiError(FI_ENOSYS, absl::StrCat(kLibrary, " has no ", name));
  }
  return absl::OkStatus();
}

// With unified addressing the driver takes host addresses as CUdeviceptr.
cuda::CUdeviceptr DevicePointer(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr);
}

}  // namespace

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  // Never destroyed: copies may run while static objects are torn down.
  static const auto* const loaded =
      new absl::StatusOr<std::unique_ptr<CudaDriver>>(Load());
  if (!loaded->ok()) return loaded->status();
  return loaded->value().get();
}

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load() {
  // Never closed, even when unusable: cuInit may have started the driver's
  // threads.
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return FiError(FI_ENOSYS, absl::StrCat("dlopen: ", dlerror()));
  }
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  Api& api = driver->api_;
  FABRIC_RETURN_IF_ERROR(Resolve(library, "cuInit", api.init));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuDeviceGetCount", api.device_get_count));
  FABRIC_RETURN_IF_ERROR(Resolve(library, "cuDeviceGet", api.device_get));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuCtxPushCurrent_v2", api.ctx_push_current));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuCtxPopCurrent_v2", api.ctx_pop_current));
  FABRIC_RETURN_IF_ERROR(Resolve(library, "cuMemcpy", api.memcpy));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuPointerGetAttribute", api.pointer_get_attribute));
  FABRIC_RETURN_IF_ERROR(
      Resolve(library, "cuGetErrorName", api.get_error_name));

  if (cuda::CUresult rc = api.init(0); rc != cuda::kSuccess) {
    return FiError(FI_ENOSYS,
                   absl::StrCat("cuInit: ", driver->ErrorName(rc)));
  }
  int count = 0;
  if (cuda::CUresult rc = api.device_get_count(&count);
      rc != cuda::kSuccess) {
    return FiError(FI_ENOSYS,
                   absl::StrCat("cuDeviceGetCount: ", driver->ErrorName(rc)));
  }
  if (count <= 0) return FiError(FI_ENOSYS, "no CUDA device");
  driver->device_count_ = count;
  driver->contexts_ = std::make_unique<DeviceContext[]>(count);
  return driver;
}

int CudaDriver::Copy(uint64_t device, void* dest, const void* src,
                     size_t size) const {
  if (device >= static_cast<uint64_t>(device_count_)) {
    FABRIC_LOG_WARN(nullptr, FI_LOG_CORE,
                    "no CUDA device %" PRIu64 " (there are %d)\n", device,
                    device_count_);
    return -FI_EINVAL;
  }
  cuda::CUcontext context = nullptr;
  if (cuda::CUresult rc = RetainContext(static_cast<int>(device), &context);
      rc != cuda::kSuccess) {
    return Fail("cuDevicePrimaryCtxRetain", rc);
  }
  if (cuda::CUresult rc = api_.ctx_push_current(context);
      rc != cuda::kSuccess) {
    return Fail("cuCtxPushCurrent", rc);
  }
  cuda::CUresult copied =
      api_.memcpy(DevicePointer(dest), DevicePointer(src), size);
  cuda::CUcontext popped;
  cuda::CUresult restored = api_.ctx_pop_current(&popped);
  if (copied != cuda::kSuccess) return Fail("cuMemcpy", copied);
  if (restored != cuda::kSuccess) return Fail("cuCtxPopCurrent", restored);
  return 0;
}

bool CudaDriver::IsDeviceMemory(const void* ptr) const {
  unsigned int memory_type = 0;
  // Host memory the driver never saw is an error (CUDA_ERROR_INVALID_VALUE).
  return api_.pointer_get_attribute(&memory_type,
                                    cuda::kPointerAttributeMemoryType,
                                    DevicePointer(ptr)) == cuda::kSuccess &&
         memory_type == cuda::kMemoryTypeDevice;
}

cuda::CUresult CudaDriver::RetainContext(int device,
                                         cuda::CUcontext* context) const {
  DeviceContext& slot = contexts_[device];
  std::call_once(slot.retain_once, [this, device, &slot] {
    cuda::CUdevice handle;
    slot.retain_result = api_.device_get(&handle, device);
    if (slot.retain_result == cuda::kSuccess) {
      slot.retain_result = api_.primary_ctx_retain(&slot.context, handle);
    }
  });
  *context = slot.context;
  return slot.retain_result;
}

std::string CudaDriver::ErrorName(cuda::CUresult result) const {
  const char* name = nullptr;
  if (api_.get_error_name(result, &name) != cuda::kSuccess ||
      name == nullptr) {
    return absl::StrCat("CUDA error ", result);
  }
  return name;
}

int CudaDriver::Fail(const char* call, cuda::CUresult result) const {
  FABRIC_LOG_WARN(nullptr, FI_LOG_CORE, "%s failed: %s\n", call,
                  ErrorName(result).c_str());
  return -FI_EIO;
}

}  // namespace fabric

// File: fabric/hmem/cuda_driver.h
//
// The CUDA driver API, found at run time: the library is built without CUDA
// headers or libraries and loads libcuda.so.1 the first time CUDA is asked
// for. Only the calls that copying needs are declared, with the driver's
// types. Copies run in the primary context of the device they name, pushed
// for the copy and popped after it, so the caller's current context is left
// as it was.
//
//   absl::StatusOr<const CudaDriver*> cuda = CudaDriver::Get();
//   if (!cuda.ok()) return ToFiErrno(cuda.status());  // -FI_ENOSYS
//   int rc = (*cuda)->Copy(device, host_buffer, device_buffer, size);
#ifndef FABRIC_HMEM_CUDA_DRIVER_H_
#define FABRIC_HMEM_CUDA_DRIVER_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace fabric {

// The driver's types and the constants used here (from cuda.h).
namespace cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;

inline constexpr CUresult kSuccess = 0;
// CU_POINTER_ATTRIBUTE_MEMORY_TYPE and its value CU_MEMORYTYPE_DEVICE.
inline constexpr int kPointerAttributeMemoryType = 2;
inline constexpr unsigned int kMemoryTypeDevice = 2;

}  // namespace cuda

class CudaDriver {
 public:
  // The driver, loaded and initialized by the first call; an FI_ENOSYS status
  // saying why when libcuda.so.1 is missing, lacks a call, fails cuInit or
  // sees no device. Thread-safe; the answer never changes afterwards.
  static absl::StatusOr<const CudaDriver*> Get();

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  int device_count() const { return device_count_; }

  // Copies `size` bytes from `src` to `dest`; either may be device memory
  // (the driver tells by the address). 0, -FI_EINVAL when `device` is not a
  // device index, -FI_EIO when the driver fails.
  int Copy(uint64_t device, void* dest, const void* src, size_t size) const;

  // Whether `ptr` points into memory allocated on a device.
  bool IsDeviceMemory(const void* ptr) const;

 private:
  // The driver's entry points; the _v2 names are those cuda.h maps to.
  struct Api {
    cuda::CUresult (*init)(unsigned int flags);                  // cuInit
    cuda::CUresult (*device_get_count)(int* count);
    cuda::CUresult (*device_get)(cuda::CUdevice* device, int ordinal);
    cuda::CUresult (*primary_ctx_retain)(cuda::CUcontext* context,
                                         cuda::CUdevice device);
    cuda::CUresult (*ctx_push_current)(cuda::CUcontext context);  // _v2
    cuda::CUresult (*ctx_pop_current)(cuda::CUcontext* context);  // _v2
    cuda::CUresult (*memcpy)(cuda::CUdeviceptr dest, cuda::CUdeviceptr src,
                             size_t size);
    cuda::CUresult (*pointer_get_attribute)(void* data, int attribute,
                                            cuda::CUdeviceptr ptr);
    cuda::CUresult (*get_error_name)(cuda::CUresult error, const char** name);
  };

  // A device's primary context, retained by the first copy that needs it
  // (retaining creates it, which costs time and device memory).
  struct DeviceContext {
    std::once_flag retain_once;
    cuda::CUcontext context = nullptr;
    cuda::CUresult retain_result = cuda::kSuccess;
  };

  CudaDriver() = default;

  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load();

  // The primary context of `device` (a valid index), retained on first use.
  cuda::CUresult RetainContext(int device, cuda::CUcontext* context) const;

  // "CUDA_ERROR_INVALID_VALUE", or the number when the driver has no name.
  std::string ErrorName(cuda::CUresult result) const;

  // Logs a failed driver call and returns -FI_EIO.
  int Fail(const char* call, cuda::CUresult result) const;

  Api api_ = {};
  int device_count_ = 0;
  std::unique_ptr<DeviceContext[]> contexts_;  // one per device
};

}  // namespace fabric

#endif  // FABRIC_HMEM_CUDA_DRIVER_H_

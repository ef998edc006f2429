// File: fabric/hmem/memory_interface.h
//
// The built-in memory interfaces: how the library moves bytes between host
// memory and the memory of each fi_hmem_iface, and which of them this
// machine has. FI_HMEM_SYSTEM is memcpy; FI_HMEM_CUDA uses the CUDA driver
// when libcuda.so.1 loads and sees a device (cuda_driver.h); ROCR, ZE, NEURON
// and SYNAPSEAI are not implemented.
//
//   absl::StatusOr<HmemCopyFunction> copy = HmemCopyFunctionOf(FI_HMEM_CUDA);
//   if (!copy.ok()) return ToFiErrno(copy.status());  // -FI_ENOSYS: no CUDA
//   int rc = (*copy)(device, host_buffer, device_buffer, size);
#ifndef FABRIC_HMEM_MEMORY_INTERFACE_H_
#define FABRIC_HMEM_MEMORY_INTERFACE_H_

#include <rdma/fi_domain.h>
#include <stddef.h>
#include <stdint.h>

#include "absl/status/statusor.h"

namespace fabric {

// Copies `size` bytes from `src` to `dest`; one is memory of the interface on
// `device`, the other host memory. 0 or a negative fi_errno.
using HmemCopyFunction = int (*)(uint64_t device, void* dest, const void* src,
                                 size_t size);

// The copy of `iface`. FI_ENOSYS for an interface this build or machine
// cannot reach (the first such CUDA request logs a warning saying why);
// FI_EINVAL for a value that is no fi_hmem_iface. Thread-safe.
absl::StatusOr<HmemCopyFunction> HmemCopyFunctionOf(enum fi_hmem_iface iface);

// Whether buffers of `iface` can be copied here: FI_HMEM_SYSTEM always,
// FI_HMEM_CUDA when the driver loads and has a device.
bool HmemIfaceAvailable(enum fi_hmem_iface iface);

// The interface that owns the memory at `ptr`: FI_HMEM_CUDA for CUDA device
// memory, otherwise FI_HMEM_SYSTEM (the other interfaces are not detected).
enum fi_hmem_iface HmemIfaceOf(const void* ptr);

}  // namespace fabric

#endif  // FABRIC_HMEM_MEMORY_INTERFACE_H_

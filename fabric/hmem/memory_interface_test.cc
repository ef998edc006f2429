#include "fabric/hmem/memory_interface.h"

#include <rdma/fi_errno.h>

#include <memory>
#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

TEST(MemoryInterfaceTest, SystemCopyIsAPlainCopy) {
  absl::StatusOr<HmemCopyFunction> copy = HmemCopyFunctionOf(FI_HMEM_SYSTEM);
  ASSERT_TRUE(copy.ok()) << copy.status();
  const char src[] = "host to host";
  char dest[sizeof(src)] = {};
  EXPECT_EQ((*copy)(0, dest, src, sizeof(src)), 0);
  EXPECT_STREQ(dest, src);
}

TEST(MemoryInterfaceTest, SystemIsAlwaysAvailable) {
  EXPECT_TRUE(HmemIfaceAvailable(FI_HMEM_SYSTEM));
}

TEST(MemoryInterfaceTest, UnimplementedInterfacesAreNotSupported) {
  for (fi_hmem_iface iface :
       {FI_HMEM_ROCR, FI_HMEM_ZE, FI_HMEM_NEURON, FI_HMEM_SYNAPSEAI}) {
    SCOPED_TRACE(iface);
    EXPECT_FALSE(HmemIfaceAvailable(iface));
    EXPECT_EQ(ToFiErrno(HmemCopyFunctionOf(iface).status()), -FI_ENOSYS);
  }
}

TEST(MemoryInterfaceTest, UnknownInterfaceValuesAreInvalid) {
  // C callers may pass any int; 6 and 7 are the unnamed values that C++ code
  // may hold in this enum without undefined behaviour.
  for (int value : {6, 7}) {
    SCOPED_TRACE(value);
    fi_hmem_iface iface = static_cast<fi_hmem_iface>(value);
    EXPECT_FALSE(HmemIfaceAvailable(iface));
    EXPECT_EQ(ToFiErrno(HmemCopyFunctionOf(iface).status()), -FI_EINVAL);
  }
}

TEST(MemoryInterfaceTest, HostMemoryIsSystemMemory) {
  char on_stack[16];
  auto on_heap = std::make_unique<char[]>(16);
  static char in_data[16];
  EXPECT_EQ(HmemIfaceOf(on_stack), FI_HMEM_SYSTEM);
  EXPECT_EQ(HmemIfaceOf(on_heap.get()), FI_HMEM_SYSTEM);
  EXPECT_EQ(HmemIfaceOf(in_data), FI_HMEM_SYSTEM);
  EXPECT_EQ(HmemIfaceOf(nullptr), FI_HMEM_SYSTEM);
}

}  // namespace
}  // namespace fabric

// Describing, gathering and scattering an application's buffer, with the
// memory interface of each piece taken from its descriptor.
#include "fabric/providers/util/app_buffer.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include <cstdint>
#include <string>

#include "fabric/providers/util/mr.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

TEST(AppBufferTest, DescribesPiecesWithTheirMemory) {
  UtilDomain domain{};
  UtilMr mr{};
  mr.mr_fid.fid.fclass = FI_CLASS_MR;
  mr.domain = &domain;
  mr.iface = FI_HMEM_CUDA;
  mr.device = 3;
  char a[4], b[6];
  iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
  void* desc[2] = {nullptr, &mr};
  AppBuffer buffer;
  absl::StatusOr<size_t> length =
      DescribeAppBuffer(domain, iov, desc, 2, &buffer);
  ASSERT_TRUE(length.ok());
  EXPECT_EQ(*length, 10u);
  ASSERT_EQ(buffer.size(), 2u);
  EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(buffer[1].iface, FI_HMEM_CUDA);
  EXPECT_EQ(buffer[1].device, 3u);
  EXPECT_EQ(AppBufferLength(buffer), 10u);
  // A buffer described again holds only the new pieces, each with its own
  // memory kind.
  void* swapped[2] = {&mr, nullptr};
  ASSERT_TRUE(DescribeAppBuffer(domain, iov, swapped, 2, &buffer).ok());
  EXPECT_EQ(buffer[0].iface, FI_HMEM_CUDA);
  EXPECT_EQ(buffer[1].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(buffer[1].device, 0u);
  ASSERT_TRUE(DescribeAppBuffer(domain, iov, nullptr, 1, &buffer).ok());
  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(*DescribeAppBuffer(domain, nullptr, nullptr, 0, &buffer), 0u);
  EXPECT_TRUE(buffer.empty());
}

TEST(AppBufferTest, RefusesWhatItCannotDescribe) {
  UtilDomain domain{};
  UtilDomain other{};
  char a[4];
  iovec iov[2] = {{a, sizeof(a)}, {nullptr, 1}};
  AppBuffer buffer;
  EXPECT_FALSE(DescribeAppBuffer(domain, nullptr, nullptr, 1, &buffer).ok());
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, nullptr, 2, &buffer).ok());
  iovec huge[2] = {{a, SIZE_MAX}, {a, 1}};
  EXPECT_FALSE(DescribeAppBuffer(domain, huge, nullptr, 2, &buffer).ok());
  UtilMr foreign{};
  foreign.mr_fid.fid.fclass = FI_CLASS_MR;
  foreign.domain = &other;
  void* desc[1] = {&foreign};
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, desc, 1, &buffer).ok());
  fid not_a_region = {};
  not_a_region.fclass = FI_CLASS_CQ;
  desc[0] = &not_a_region;
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, desc, 1, &buffer).ok());
}

TEST(AppBufferTest, GathersAndScattersAcrossPieces) {
  UtilDomain domain{};
  char a[3] = {}, b[5] = {};
  iovec iov[3] = {{a, sizeof(a)}, {nullptr, 0}, {b, sizeof(b)}};
  AppBuffer described;
  ASSERT_TRUE(DescribeAppBuffer(domain, iov, nullptr, 3, &described).ok());
  const AppBuffer* buffer = &described;
  EXPECT_EQ(ScatterAppBuffer(domain.copier, *buffer, "abcdef", 6), 6);
  EXPECT_EQ(std::string(a, 3), "abc");
  EXPECT_EQ(std::string(b, 3), "def");
  char out[8] = {};
  EXPECT_EQ(GatherAppBuffer(domain.copier, *buffer, out, sizeof(out)), 8);
  EXPECT_EQ(std::string(out, 6), "abcdef");
  EXPECT_EQ(GatherAppBuffer(domain.copier, *buffer, out, 4), 4);
  // More than the buffer holds.
  EXPECT_EQ(ScatterAppBuffer(domain.copier, *buffer, "123456789", 9), -FI_EIO);
}

ssize_t ShortCopyFrom(void*, size_t size, fi_hmem_iface, uint64_t, const iovec*,
                      size_t, uint64_t) {
  return static_cast<ssize_t>(size) - 1;
}
ssize_t FailingCopyTo(fi_hmem_iface, uint64_t, const iovec*, size_t, uint64_t,
                      const void*, size_t) {
  return -FI_EFAULT;
}

TEST(AppBufferTest, ShortOrFailedCopiesAreErrors) {
  UtilDomain domain{};
  fi_hmem_override_ops ops = {sizeof(ops), ShortCopyFrom, FailingCopyTo};
  ASSERT_TRUE(domain.copier.SetOverride(&ops).ok());
  char a[4] = {};
  iovec iov = {a, sizeof(a)};
  AppBuffer described;
  ASSERT_TRUE(DescribeAppBuffer(domain, &iov, nullptr, 1, &described).ok());
  const AppBuffer* buffer = &described;
  char out[4];
  EXPECT_EQ(GatherAppBuffer(domain.copier, *buffer, out, 4), -FI_EIO);
  EXPECT_EQ(ScatterAppBuffer(domain.copier, *buffer, "abcd", 4), -FI_EFAULT);
}

}  // namespace
}  // namespace fabric

// Describing, gathering and scattering an application's buffer, with the
// memory interface of each piece taken from its descriptor.
#include "fabric/providers/util/app_buffer.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <cstdint>
#include <string>

#include "fabric/providers/util/mr.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// A tcp domain whose mr_mode is `mr_mode`, with a host-memory region of
// `bytes` registered in it.
class RegisteredDomain {
 public:
  RegisteredDomain(uint64_t mr_mode, void* bytes, size_t len) {
    fi_info* hints = fi_allocinfo();
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->ep_attr->type = FI_EP_MSG;
    hints->domain_attr->mr_mode = static_cast<int>(mr_mode);
    EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE,
                         hints, &info_),
              0);
    fi_freeinfo(hints);
    if (info_ == nullptr) return;
    EXPECT_EQ(info_->domain_attr->mr_mode & FI_MR_HMEM, mr_mode & FI_MR_HMEM);
    EXPECT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
    EXPECT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
    EXPECT_EQ(fi_mr_reg(domain_, bytes, len, FI_SEND, 0, 0, 0, &mr_, nullptr),
              0);
  }
  ~RegisteredDomain() {
    if (mr_ != nullptr) fi_close(&mr_->fid);
    if (domain_ != nullptr) fi_close(&domain_->fid);
    if (fabric_ != nullptr) fi_close(&fabric_->fid);
    fi_freeinfo(info_);
  }
  const UtilDomain& domain() const {
    return *reinterpret_cast<const UtilDomain*>(domain_);
  }
  void* desc() const { return fi_mr_desc(mr_); }
  fid_mr* mr() const { return mr_; }

 private:
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_mr* mr_ = nullptr;
};

TEST(AppBufferTest, DescribesPiecesWithTheirMemory) {
  char a[4], b[6];
  RegisteredDomain registered(FI_MR_HMEM, b, sizeof(b));
  ASSERT_NE(registered.mr(), nullptr);
  const UtilDomain& domain = registered.domain();
  iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
  void* desc[2] = {nullptr, registered.desc()};
  AppBuffer buffer;
  absl::StatusOr<size_t> length =
      DescribeAppBuffer(domain, iov, desc, 2, &buffer);
  ASSERT_TRUE(length.ok()) << length.status();
  EXPECT_EQ(*length, 10u);
  ASSERT_EQ(buffer.size(), 2u);
  EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(buffer[1].iface, FI_HMEM_SYSTEM);  // the region's
  EXPECT_EQ(AppBufferLength(buffer), 10u);
  // A buffer described again holds only the new pieces.
  ASSERT_TRUE(DescribeAppBuffer(domain, iov, nullptr, 1, &buffer).ok());
  EXPECT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(*DescribeAppBuffer(domain, nullptr, nullptr, 0, &buffer), 0u);
  EXPECT_TRUE(buffer.empty());
}

TEST(AppBufferTest, RefusesWhatItCannotDescribe) {
  char a[4];
  RegisteredDomain registered(FI_MR_HMEM, a, sizeof(a));
  RegisteredDomain other(FI_MR_HMEM, a, sizeof(a));
  ASSERT_NE(other.mr(), nullptr);
  const UtilDomain& domain = registered.domain();
  iovec iov[2] = {{a, sizeof(a)}, {nullptr, 1}};
  AppBuffer buffer;
  EXPECT_FALSE(DescribeAppBuffer(domain, nullptr, nullptr, 1, &buffer).ok());
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, nullptr, 2, &buffer).ok());
  iovec huge[2] = {{a, SIZE_MAX}, {a, 1}};
  EXPECT_FALSE(DescribeAppBuffer(domain, huge, nullptr, 2, &buffer).ok());
  // Another domain's region, and values that are no region at all: never
  // read (a garbage pointer would crash).
  void* desc[1] = {other.desc()};
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, desc, 1, &buffer).ok());
  fid not_a_region = {};
  not_a_region.fclass = FI_CLASS_MR;
  desc[0] = &not_a_region;
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, desc, 1, &buffer).ok());
  desc[0] = reinterpret_cast<void*>(0xdeadbeef);
  EXPECT_FALSE(DescribeAppBuffer(domain, iov, desc, 1, &buffer).ok());
}

// Without FI_MR_HMEM every region is host memory: a desc is not read, so
// garbage in it is harmless (fi_mr(3): a provider that does not need
// descriptors ignores them).
TEST(AppBufferTest, WithoutDeviceRegionsDescriptorsAreNotRead) {
  char a[4];
  for (uint64_t mode : {uint64_t{0}, uint64_t{FI_MR_LOCAL}}) {
    RegisteredDomain registered(mode, a, sizeof(a));
    ASSERT_NE(registered.mr(), nullptr);
    iovec iov = {a, sizeof(a)};
    void* desc[1] = {reinterpret_cast<void*>(0xdeadbeef)};
    AppBuffer buffer;
    absl::StatusOr<size_t> length =
        DescribeAppBuffer(registered.domain(), &iov, desc, 1, &buffer);
    ASSERT_TRUE(length.ok()) << length.status();
    EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  }
}

// The inline path takes one host buffer and leaves everything else to
// DescribeAppBuffer: several pieces, a NULL base, and a desc that must be
// looked up (FI_MR_HMEM).
TEST(AppBufferTest, OneHostBufferTakesOnlyTheCommonCase) {
  char a[4];
  RegisteredDomain host(0, a, sizeof(a));
  RegisteredDomain device(FI_MR_HMEM, a, sizeof(a));
  ASSERT_NE(host.mr(), nullptr);
  ASSERT_NE(device.mr(), nullptr);
  iovec iov[2] = {{a, sizeof(a)}, {a, 1}};
  void* desc[2] = {reinterpret_cast<void*>(0xdeadbeef), nullptr};
  AppBuffer buffer;
  size_t length = 0;
  ASSERT_TRUE(
      DescribeOneHostBuffer(host.domain(), iov, desc, 1, &buffer, &length));
  ASSERT_EQ(buffer.size(), 1u);
  EXPECT_EQ(buffer[0].iov.iov_base, a);
  EXPECT_EQ(buffer[0].iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(length, sizeof(a));
  AppBuffer untouched;
  EXPECT_FALSE(DescribeOneHostBuffer(host.domain(), iov, nullptr, 2,
                                     &untouched, &length));
  EXPECT_FALSE(DescribeOneHostBuffer(host.domain(), nullptr, nullptr, 1,
                                     &untouched, &length));
  iovec null_base = {nullptr, 1};
  EXPECT_FALSE(DescribeOneHostBuffer(host.domain(), &null_base, nullptr, 1,
                                     &untouched, &length));
  EXPECT_FALSE(DescribeOneHostBuffer(device.domain(), iov, desc, 1,
                                     &untouched, &length));
  EXPECT_TRUE(untouched.empty());
  // With FI_MR_HMEM a NULL desc is host memory.
  desc[0] = nullptr;
  EXPECT_TRUE(DescribeOneHostBuffer(device.domain(), iov, desc, 1,
                                    &untouched, &length));
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

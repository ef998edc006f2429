// Memory regions on the shared domain, through the C API (tcp on lo), and
// the remote-access check providers use (MrResolveRemote).
#include "fabric/providers/util/mr.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <set>
#include <string>
#include <vector>

#include "fabric/api/core/status.h"
#include "fabric/fixtures/loopback_domain_test.h"
#include "fabric/hmem/memory_interface.h"
#include "gtest/gtest.h"

namespace {

using fabric::MrResolveRemote;
using fabric::UtilDomain;

class MrTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  // Opens tcp on lo with the application accepting `mr_mode`.
  void OpenDomain(int mr_mode) {
    LoopbackDomainTest::OpenDomain(
        [mr_mode](fi_info* hints) { hints->domain_attr->mr_mode = mr_mode; });
  }
  void TearDown() override {
    for (fid_mr* mr : mrs_) EXPECT_EQ(fi_close(&mr->fid), 0);
    LoopbackDomainTest::TearDown();
  }

  fid_mr* Reg(void* buf, size_t len, uint64_t access, uint64_t key = 0,
              uint64_t offset = 0) {
    fid_mr* mr = nullptr;
    EXPECT_EQ(fi_mr_reg(domain_, buf, len, access, offset, key, 0, &mr,
                        &context_),
              0);
    if (mr != nullptr) mrs_.push_back(mr);
    return mr;
  }

  UtilDomain* Util() { return fabric::FidCast<UtilDomain>(domain_); }

  // fi_mr_regattr's attributes for the host memory `piece`.
  static fi_mr_attr HostAttr(const iovec* piece, uint64_t access) {
    fi_mr_attr attr = {};
    attr.mr_iov = piece;
    attr.iov_count = 1;
    attr.access = access;
    return attr;
  }

  // The pieces a remote access reaches (no target endpoint).
  absl::StatusOr<std::vector<iovec>> Resolve(uint64_t key, uint64_t addr,
                                             size_t len, uint64_t access) {
    fabric::RemoteAccess request;
    request.key = key;
    request.addr = addr;
    request.len = len;
    request.access = access;
    absl::StatusOr<fabric::RemoteRegion> region =
        MrResolveRemote(Util(), request);
    if (!region.ok()) return region.status();
    return region->pieces;
  }

  std::vector<fid_mr*> mrs_;
  int context_ = 0;
};

TEST_F(MrTest, ProviderKeysAreRandomAndUnique) {
  OpenDomain(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  EXPECT_EQ(info_->domain_attr->mr_mode, FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  char buffer[64];
  std::set<uint64_t> keys;
  for (int i = 0; i < 64; ++i) {
    fid_mr* mr = Reg(buffer, sizeof(buffer), FI_REMOTE_READ, /*key=*/7);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->fid.fclass, FI_CLASS_MR);
    EXPECT_EQ(mr->fid.context, &context_);
    EXPECT_NE(fi_mr_desc(mr), nullptr);
    keys.insert(fi_mr_key(mr));
  }
  EXPECT_EQ(keys.size(), 64u);  // the requested key 7 is ignored
  EXPECT_EQ(keys.count(7), 0u);
  // Small keys would be guessable: random 64-bit keys are almost never.
  int small = 0;
  for (uint64_t key : keys) small += key < (uint64_t{1} << 32);
  EXPECT_LT(small, 4);
}

TEST_F(MrTest, ApplicationKeysMustBeUnique) {
  OpenDomain(0);
  char buffer[64];
  fid_mr* mr = Reg(buffer, sizeof(buffer), FI_REMOTE_WRITE, 1234);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(fi_mr_key(mr), 1234u);
  fid_mr* again = nullptr;
  EXPECT_EQ(fi_mr_reg(domain_, buffer, sizeof(buffer), FI_REMOTE_WRITE, 0,
                      1234, 0, &again, nullptr),
            -FI_ENOKEY);
  EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);  // the domain holds its MRs
}

// A cache of the last descriptor found live answers without a lookup until
// a region closes; a closed region's descriptor (even one whose memory was
// reused for a new region's) and a made-up one are never live.
TEST_F(MrTest, CachedDescriptorChecksSeeClosedRegions) {
  OpenDomain(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  char buffer[64];
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(domain_, buffer, sizeof(buffer), FI_SEND, 0, 0, 0, &mr,
                      nullptr),
            0);
  void* desc = fi_mr_desc(mr);
  fabric::LiveRegionCache cache;
  EXPECT_TRUE(cache.IsLive(desc));
  EXPECT_TRUE(cache.IsLive(desc));
  int garbage = 0;
  EXPECT_FALSE(cache.IsLive(&garbage));
  EXPECT_FALSE(cache.IsLive(nullptr));
  EXPECT_TRUE(cache.IsLive(desc));
  ASSERT_EQ(fi_close(&mr->fid), 0);
  EXPECT_FALSE(cache.IsLive(desc));
  fid_mr* other = Reg(buffer, sizeof(buffer), FI_SEND);
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(cache.IsLive(fi_mr_desc(other)));
}

TEST_F(MrTest, RemoteAccessIsCheckedForKeyBoundsAndRights) {
  OpenDomain(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
  char buffer[100];
  fid_mr* mr = Reg(buffer, sizeof(buffer), FI_REMOTE_READ);
  ASSERT_NE(mr, nullptr);
  uint64_t base = reinterpret_cast<uintptr_t>(buffer);
  uint64_t key = fi_mr_key(mr);

  auto ok = Resolve(key, base + 10, 90, FI_REMOTE_READ);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].iov_base, buffer + 10);
  EXPECT_EQ((*ok)[0].iov_len, 90u);
  EXPECT_FALSE(Resolve(key + 1, base, 1, FI_REMOTE_READ).ok());
  EXPECT_FALSE(Resolve(key, base - 1, 2, FI_REMOTE_READ).ok());
  EXPECT_FALSE(Resolve(key, base + 10, 91, FI_REMOTE_READ).ok());
  EXPECT_FALSE(
      Resolve(key, base + 99, SIZE_MAX, FI_REMOTE_READ).ok());
  EXPECT_FALSE(Resolve(key, base, 1, FI_REMOTE_WRITE).ok());
  EXPECT_EQ(fabric::ToFiErrno(Resolve(key, base, 1, FI_REMOTE_WRITE).status()),
            -FI_EACCES);
  // A closed region is gone.
  EXPECT_EQ(fi_close(&mr->fid), 0);
  mrs_.clear();
  EXPECT_FALSE(Resolve(key, base, 1, FI_REMOTE_READ).ok());
}

TEST_F(MrTest, OffsetsAndVectorsWithoutVirtualAddresses) {
  OpenDomain(0);
  char first[10], second[20];
  iovec iov[2] = {{first, sizeof(first)}, {second, sizeof(second)}};
  fid_mr* mr = nullptr;
  if (info_->domain_attr->mr_iov_limit < 2) GTEST_SKIP();
  ASSERT_EQ(fi_mr_regv(domain_, iov, 2, FI_REMOTE_WRITE, /*offset=*/1000, 5,
                       0, &mr, nullptr),
            0);
  mrs_.push_back(mr);
  // Addresses count from the offset, across both pieces.
  auto pieces = Resolve(5, 1008, 10, FI_REMOTE_WRITE);
  ASSERT_TRUE(pieces.ok()) << pieces.status();
  ASSERT_EQ(pieces->size(), 2u);
  EXPECT_EQ((*pieces)[0].iov_base, first + 8);
  EXPECT_EQ((*pieces)[0].iov_len, 2u);
  EXPECT_EQ((*pieces)[1].iov_base, second);
  EXPECT_EQ((*pieces)[1].iov_len, 8u);
  EXPECT_FALSE(Resolve(5, 999, 1, FI_REMOTE_WRITE).ok());
  EXPECT_FALSE(Resolve(5, 1025, 6, FI_REMOTE_WRITE).ok());
}

TEST_F(MrTest, AsynchronousRegistrationCompletesOnTheEq) {
  OpenDomain(FI_MR_PROV_KEY);
  fi_eq_attr attr = {};
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(fabric_, &attr, &eq, nullptr), 0);
  ASSERT_EQ(fi_domain_bind(domain_, &eq->fid, FI_REG_MR), 0);
  char buffer[16];
  fid_mr* mr = Reg(buffer, sizeof(buffer), FI_READ);
  ASSERT_NE(mr, nullptr);
  uint32_t event = 0;
  fi_eq_entry entry = {};
  ASSERT_EQ(fi_eq_read(eq, &event, &entry, sizeof(entry), 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_MR_COMPLETE));
  EXPECT_EQ(entry.fid, &mr->fid);
  EXPECT_EQ(entry.context, &context_);
  EXPECT_EQ(fi_close(&mr->fid), 0);
  mrs_.clear();
  EXPECT_EQ(fi_close(&domain_->fid), 0);
  domain_ = nullptr;
  EXPECT_EQ(fi_close(&eq->fid), 0);
}

TEST_F(MrTest, BindEnableRefresh) {
  OpenDomain(FI_MR_PROV_KEY);
  char buffer[4096];
  fid_mr* mr = Reg(buffer, sizeof(buffer), FI_REMOTE_WRITE);
  ASSERT_NE(mr, nullptr);
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(domain_, nullptr, &cntr, nullptr), 0);
  EXPECT_EQ(fi_mr_bind(mr, &cntr->fid, FI_READ), -FI_EINVAL);
  EXPECT_EQ(fi_mr_bind(mr, &fabric_->fid, FI_REMOTE_WRITE), -FI_EINVAL);
  ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
  EXPECT_EQ(fi_close(&cntr->fid), -FI_EBUSY);
  EXPECT_EQ(fi_mr_enable(mr), 0);
  iovec inside = {buffer + 100, 200};
  EXPECT_EQ(fi_mr_refresh(mr, &inside, 1, 0), 0);
  iovec outside = {buffer + 4000, 200};
  EXPECT_EQ(fi_mr_refresh(mr, &outside, 1, 0), -FI_EINVAL);
  EXPECT_EQ(fi_close(&mr->fid), 0);
  mrs_.clear();
  EXPECT_EQ(fi_close(&cntr->fid), 0);
}

TEST_F(MrTest, DeviceMemoryNeedsAnAvailableInterface) {
  OpenDomain(FI_MR_PROV_KEY | FI_MR_HMEM);
  ASSERT_NE(info_->domain_attr->mr_mode & FI_MR_HMEM, 0);
  char buffer[16];
  iovec one = {buffer, sizeof(buffer)};
  fi_mr_attr attr = HostAttr(&one, FI_READ);
  fid_mr* mr = nullptr;
  // Level Zero is never built in; CUDA only with a driver and a device.
  attr.iface = FI_HMEM_ZE;
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_ENOSYS);
  if (!fabric::HmemIfaceAvailable(FI_HMEM_CUDA)) {
    attr.iface = FI_HMEM_CUDA;
    attr.device.cuda = 0;
    EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_ENOSYS);
  }
  EXPECT_EQ(mr, nullptr);
}

TEST_F(MrTest, BadArgumentsAreRejected) {
  OpenDomain(FI_MR_PROV_KEY);
  char buffer[16];
  fid_mr* mr = nullptr;
  EXPECT_EQ(fi_mr_reg(domain_, buffer, sizeof(buffer), FI_READ, 0, 0, 0,
                      nullptr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_mr_reg(domain_, nullptr, 16, FI_READ, 0, 0, 0, &mr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_mr_reg(domain_, buffer, sizeof(buffer), FI_TAGGED, 0, 0, 0,
                      &mr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_mr_reg(domain_, buffer, sizeof(buffer), FI_READ, 0, 0,
                      FI_MULTI_RECV, &mr, nullptr),
            -FI_EBADFLAGS);
  std::vector<iovec> many(info_->domain_attr->mr_iov_limit + 1,
                          iovec{buffer, 1});
  EXPECT_EQ(fi_mr_regv(domain_, many.data(), many.size(), FI_READ, 0, 0, 0,
                       &mr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_mr_regattr(domain_, nullptr, 0, &mr), -FI_EINVAL);
  iovec one = {buffer, sizeof(buffer)};
  fi_mr_attr attr = HostAttr(&one, FI_READ);
  attr.iface = static_cast<fi_hmem_iface>(77);
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);
  attr.iface = FI_HMEM_ZE;  // device memory needs FI_MR_HMEM
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);
  attr.iface = FI_HMEM_SYSTEM;
  ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
  mrs_.push_back(mr);
  uint64_t base = 0;
  uint8_t raw[8];
  size_t key_size = sizeof(raw);
  EXPECT_EQ(fi_mr_raw_attr(mr, &base, raw, &key_size, 0), -FI_ENOSYS);
}

// fi_mr_attr's authorization key: checked for NULL and the provider's
// size limit; fields newer than the application's API version are not read.
TEST_F(MrTest, AuthorizationKeysOfRegions) {
  OpenDomain(FI_MR_PROV_KEY);
  char buffer[16];
  iovec one = {buffer, sizeof(buffer)};
  fi_mr_attr attr = HostAttr(&one, FI_REMOTE_READ);
  attr.auth_key_size = 4;
  fid_mr* mr = nullptr;
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);  // NULL key
  std::vector<uint8_t> key(65, 'k');  // tcp takes keys up to 64 bytes
  attr.auth_key = key.data();
  attr.auth_key_size = key.size();
  EXPECT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), -FI_EINVAL);
  attr.auth_key_size = 64;
  ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
  mrs_.push_back(mr);
  auto* region = fabric::FidCast<fabric::UtilMr>(mr);
  EXPECT_EQ(region->auth_key, std::string(64, 'k'));
}

TEST_F(MrTest, OldApplicationsFieldsAreNotRead) {
  LoopbackDomainTest::OpenDomain(
      [](fi_info* hints) { hints->domain_attr->mr_mode = FI_MR_BASIC; },
      FI_VERSION(1, 4));
  char buffer[16];
  iovec one = {buffer, sizeof(buffer)};
  fi_mr_attr attr = HostAttr(&one, FI_REMOTE_READ);
  // What a 1.4 application's smaller struct would be followed by.
  attr.auth_key_size = 4;
  attr.iface = static_cast<fi_hmem_iface>(77);
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_regattr(domain_, &attr, 0, &mr), 0);
  mrs_.push_back(mr);
  auto* region = fabric::FidCast<fabric::UtilMr>(mr);
  EXPECT_EQ(region->iface, FI_HMEM_SYSTEM);
  EXPECT_EQ(region->auth_key, "");
}

}  // namespace

// Mr over tcp on lo: provider and requested keys, fi_mr_regattr, and errors
// that keep their fi_errno.
#include "fabric/api/cxx/mr.h"

#include <rdma/fi_errno.h>
#include <sys/uio.h>

#include <type_traits>
#include <vector>

#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Mr> &&
                  std::is_nothrow_move_constructible_v<ofi::Mr>,
              "ofi::Mr is move-only");

TEST(MrTest, ProviderKeysAreSetAndDistinct) {
  absl::StatusOr<ofi::testing::Loopback> lo =
      ofi::testing::OpenLoopback(FI_MR_PROV_KEY);
  ASSERT_TRUE(lo.ok()) << lo.status();
  std::vector<char> buffer(4096);
  absl::StatusOr<ofi::Mr> first =
      ofi::RegisterMr(lo->domain, buffer.data(), 1024, FI_REMOTE_WRITE);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<ofi::Mr> second = ofi::RegisterMr(
      lo->domain, buffer.data() + 1024, 1024, FI_REMOTE_READ);
  ASSERT_TRUE(second.ok()) << second.status();

  EXPECT_NE(first->Key(), 0u);
  EXPECT_NE(first->Key(), FI_KEY_NOTAVAIL);
  EXPECT_NE(first->Key(), second->Key());
  EXPECT_NE(first->Desc(), nullptr);
}

TEST(MrTest, RequestedKeysAreUsedOnceAndKeepTheFiErrno) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  char buffer[64];
  absl::StatusOr<ofi::Mr> mr =
      ofi::RegisterMr(lo->domain, buffer, sizeof(buffer), FI_SEND, 7);
  ASSERT_TRUE(mr.ok()) << mr.status();
  EXPECT_EQ(mr->Key(), 7u);

  absl::StatusOr<ofi::Mr> again =
      ofi::RegisterMr(lo->domain, buffer, sizeof(buffer), FI_SEND, 7);
  EXPECT_EQ(ofi::FiErrno(again.status()), FI_ENOKEY) << again.status();
}

TEST(MrTest, RegattrRegistersUpToTheIovLimit) {
  absl::StatusOr<ofi::testing::Loopback> lo =
      ofi::testing::OpenLoopback(FI_MR_PROV_KEY);
  ASSERT_TRUE(lo.ok()) << lo.status();
  std::vector<char> buffer(64);
  size_t limit = lo->info->domain_attr->mr_iov_limit;
  std::vector<iovec> iov(limit + 1, iovec{buffer.data(), buffer.size()});
  fi_mr_attr attr = {};
  attr.mr_iov = iov.data();
  attr.iov_count = limit;
  attr.access = FI_READ | FI_WRITE;
  absl::StatusOr<ofi::Mr> mr = ofi::RegisterMr(lo->domain, attr);
  ASSERT_TRUE(mr.ok()) << mr.status();
  EXPECT_NE(mr->Key(), FI_KEY_NOTAVAIL);

  attr.iov_count = limit + 1;
  absl::StatusOr<ofi::Mr> over = ofi::RegisterMr(lo->domain, attr);
  EXPECT_EQ(ofi::FiErrno(over.status()), FI_EINVAL) << over.status();
}

}  // namespace

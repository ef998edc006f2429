// OpenDomain over tcp on lo, and Handle::Close reporting a parent closed
// before its children.
#include "fabric/api/cxx/domain.h"

#include <rdma/fi_errno.h>

#include <type_traits>

#include "fabric/api/cxx/cntr.h"
#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Domain> &&
                  std::is_nothrow_move_constructible_v<ofi::Domain>,
              "ofi::Domain is move-only");

TEST(DomainTest, OpensOnTheFabricOfItsInfo) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  int context = 0;
  absl::StatusOr<ofi::Domain> domain =
      ofi::OpenDomain(lo->fabric, *lo->info, 0, &context);
  ASSERT_TRUE(domain.ok()) << domain.status();
  EXPECT_EQ(domain->get()->fid.fclass, FI_CLASS_DOMAIN);
  EXPECT_EQ(domain->get()->fid.context, &context);
}

TEST(DomainTest, UnsupportedFlagsKeepTheFiErrno) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  absl::StatusOr<ofi::Domain> peer =
      ofi::OpenDomain(lo->fabric, *lo->info, FI_PEER);
  ASSERT_FALSE(peer.ok());
  EXPECT_EQ(ofi::FiErrno(peer.status()), FI_EINVAL);
  EXPECT_EQ(peer.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DomainTest, CloseReportsAParentWithChildrenOpenAsBusy) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  absl::StatusOr<ofi::Cntr> cntr = ofi::OpenCntr(lo->domain);
  ASSERT_TRUE(cntr.ok()) << cntr.status();

  absl::Status busy = lo->fabric.Close();
  EXPECT_EQ(ofi::FiErrno(busy), FI_EBUSY) << busy;
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(lo->fabric);  // still owned, so a later Close can succeed
  EXPECT_EQ(ofi::FiErrno(lo->domain.Close()), FI_EBUSY);
  EXPECT_TRUE(lo->domain);

  EXPECT_TRUE(cntr->Close().ok());
  EXPECT_TRUE(lo->domain.Close().ok());
  EXPECT_FALSE(lo->domain);
  EXPECT_TRUE(lo->fabric.Close().ok());
  EXPECT_FALSE(lo->fabric);
}

}  // namespace

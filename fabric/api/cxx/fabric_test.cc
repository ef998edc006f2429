#include "fabric/api/cxx/fabric.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include "gtest/gtest.h"

namespace {

TEST(CxxApiTest, GetInfoAndOpenFabric) {
  ofi::Info hints = ofi::AllocInfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  absl::StatusOr<ofi::Info> info = ofi::GetInfo(hints.get());
  ASSERT_TRUE(info.ok()) << info.status();
  int entries = 0;
  for (const fi_info& entry : ofi::Entries(*info)) {
    EXPECT_STREQ(entry.fabric_attr->prov_name, "tcp");
    ++entries;
  }
  EXPECT_GT(entries, 0);

  absl::StatusOr<ofi::Fabric> fabric = ofi::OpenFabric(*(*info)->fabric_attr);
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  EXPECT_EQ(fabric->get()->fid.fclass, FI_CLASS_FABRIC);
  EXPECT_TRUE(fabric->Close().ok());
  EXPECT_FALSE(*fabric);
}

TEST(CxxApiTest, ErrorsCarryTheFiErrno) {
  ofi::Info hints = ofi::AllocInfo();
  hints->fabric_attr->prov_name = strdup("no_such_provider");
  absl::StatusOr<ofi::Info> info = ofi::GetInfo(hints.get());
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ofi::FiErrno(info.status()), FI_ENODATA);

  ofi::GetInfoOptions future;
  future.version = FI_VERSION(1, 99);
  info = ofi::GetInfo(nullptr, future);
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ofi::FiErrno(info.status()), FI_ENOSYS);
}

TEST(CxxApiTest, HandleMovesOwnership) {
  absl::StatusOr<ofi::Info> info = ofi::GetInfo(nullptr);
  ASSERT_TRUE(info.ok());
  absl::StatusOr<ofi::Fabric> fabric = ofi::OpenFabric(*(*info)->fabric_attr);
  ASSERT_TRUE(fabric.ok());
  ofi::Fabric moved = std::move(*fabric);
  EXPECT_FALSE(*fabric);
  EXPECT_TRUE(moved);
  // Destruction closes it; ASan reports a leak if it does not.
}

}  // namespace

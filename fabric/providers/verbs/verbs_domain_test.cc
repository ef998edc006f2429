// A verbs domain opens only on a device librdmacm has: anything else (and
// every name on a machine without RDMA devices, as here) is FI_ENODEV,
// saying why.
#include "fabric/providers/verbs/verbs_domain.h"

#include <rdma/fi_errno.h>

#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

TEST(VerbsDomainTest, AnUnknownDeviceIsNoDevice) {
  absl::StatusOr<const VerbsApi*> api = LoadVerbsApi();
  ASSERT_TRUE(api.ok()) << api.status();
  absl::StatusOr<std::unique_ptr<VerbsDomain>> domain =
      VerbsDomain::Open(*api, "no_such_device_0");
  ASSERT_FALSE(domain.ok());
  EXPECT_EQ(ToFiErrno(domain.status()), -FI_ENODEV) << domain.status();
  EXPECT_FALSE(domain.status().message().empty());
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

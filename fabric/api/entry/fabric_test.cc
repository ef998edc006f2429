// fi_fabric, fi_close of a fabric, fi_open, fi_version.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "gtest/gtest.h"

namespace {

constexpr uint32_t kVersion = FI_VERSION(1, 18);

fi_info* TcpInfo() {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  fi_info* info = nullptr;
  EXPECT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, hints, &info), 0);
  fi_freeinfo(hints);
  return info;
}

TEST(FabricTest, VersionIs118) {
  EXPECT_EQ(fi_version(), FI_VERSION(1, 18));
  EXPECT_EQ(FI_MAJOR(fi_version()), 1u);
  EXPECT_EQ(FI_MINOR(fi_version()), 18u);
}

TEST(FabricTest, OpenAndCloseFabric) {
  fi_info* info = TcpInfo();
  ASSERT_NE(info, nullptr);
  fid_fabric* fabric = nullptr;
  int context = 0;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, &context), 0);
  EXPECT_EQ(fabric->fid.fclass, FI_CLASS_FABRIC);
  EXPECT_EQ(fabric->fid.context, &context);
  EXPECT_EQ(fabric->api_version, kVersion);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
  fi_freeinfo(info);
}

TEST(FabricTest, BadArgumentsAreRejected) {
  fi_info* info = TcpInfo();
  ASSERT_NE(info, nullptr);
  fid_fabric* fabric = nullptr;
  EXPECT_EQ(fi_fabric(nullptr, &fabric, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_fabric(info->fabric_attr, nullptr, nullptr), -FI_EINVAL);

  fi_fabric_attr attr = *info->fabric_attr;
  attr.prov_name = nullptr;
  EXPECT_EQ(fi_fabric(&attr, &fabric, nullptr), -FI_EINVAL);
  attr = *info->fabric_attr;
  attr.name = nullptr;
  EXPECT_EQ(fi_fabric(&attr, &fabric, nullptr), -FI_EINVAL);
  attr = *info->fabric_attr;
  attr.name = const_cast<char*>("10.255.255.0/24-no-such-net");
  EXPECT_EQ(fi_fabric(&attr, &fabric, nullptr), -FI_ENODATA);
  attr = *info->fabric_attr;
  attr.prov_name = const_cast<char*>("no_such_provider");
  EXPECT_EQ(fi_fabric(&attr, &fabric, nullptr), -FI_ENODATA);
  attr = *info->fabric_attr;
  attr.api_version = FI_VERSION(1, 99);
  EXPECT_EQ(fi_fabric(&attr, &fabric, nullptr), -FI_ENOSYS);
  fi_freeinfo(info);
}

TEST(FabricTest, OpenUnknownNameIsEnosys) {
  fid* object = nullptr;
  EXPECT_EQ(fi_open(kVersion, "no_such_object", nullptr, 0, 0, &object,
                    nullptr),
            -FI_ENOSYS);
  EXPECT_EQ(fi_open(kVersion, nullptr, nullptr, 0, 0, &object, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_open(kVersion, "logging", nullptr, 0, 0, nullptr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_open(FI_VERSION(3, 0), "logging", nullptr, 0, 0, &object,
                    nullptr),
            -FI_ENOSYS);
}

}  // namespace

// What the IP providers (tcp, udp) say about their interface setting.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::HasSubstr;

class IpProviderTest : public ConfigTest {};

// An FI_<PROV>_IFACE that names no usable interface leaves the provider
// with nothing to offer: it says so instead of vanishing silently.
TEST_F(IpProviderTest, AnInterfaceListThatNamesNothingSaysSo) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_TCP_IFACE", "nonexistent0");
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  fi_info* info = nullptr;
  CapturedStderr err;
  EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info),
            -FI_ENODATA);
  EXPECT_THAT(err.Finish(),
              HasSubstr("FI_TCP_IFACE=nonexistent0 names no interface that "
                        "is up with an IP address: tcp offers nothing"));
  fi_freeinfo(info);
  fi_freeinfo(hints);
}

}  // namespace
}  // namespace fabric

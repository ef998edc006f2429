// When nothing matches, fi_getinfo says why: each provider's first unmet hint
// at warning level. Runs with FI_LOG_LEVEL=warn (see BUILD).
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <string>

#include "gtest/gtest.h"

namespace {

TEST(GetInfoExplainTest, EachProviderSaysWhyItDoesNotMatch) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_SOCK_STREAM;
  fi_info* info = nullptr;
  testing::internal::CaptureStderr();
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, -FI_ENODATA);
  EXPECT_EQ(info, nullptr);
  EXPECT_NE(log.find("tcp: ep_type FI_EP_SOCK_STREAM not supported"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("udp: ep_type FI_EP_SOCK_STREAM not supported"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("<warn>"), std::string::npos) << log;
  fi_freeinfo(hints);
}

TEST(GetInfoExplainTest, SizeLimitsNameTheField) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->tx_attr->iov_limit = 1000;
  fi_info* info = nullptr;
  testing::internal::CaptureStderr();
  EXPECT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info),
            -FI_ENODATA);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("tcp: tx_attr->iov_limit 1000 exceeds the maximum"),
            std::string::npos)
      << log;
  fi_freeinfo(hints);
}

}  // namespace

#include "tools/fi_info/hints.h"

#include <rdma/fabric.h>

#include <string>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

TEST(MakeHintsTest, AcceptsEveryModeAndMrModeButBasicAndScalable) {
  UniqueInfo hints = MakeHints(Options());
  ASSERT_NE(hints, nullptr);
  EXPECT_EQ(hints->caps, 0u);
  EXPECT_EQ(hints->mode, ~uint64_t{0});
  EXPECT_EQ(hints->domain_attr->mode, ~uint64_t{0});
  EXPECT_EQ(hints->domain_attr->mr_mode, ~(FI_MR_BASIC | FI_MR_SCALABLE));
  EXPECT_EQ(hints->ep_attr->type, FI_EP_UNSPEC);
  EXPECT_EQ(hints->addr_format, uint32_t{FI_FORMAT_UNSPEC});
  EXPECT_EQ(hints->fabric_attr->prov_name, nullptr);
  EXPECT_EQ(hints->fabric_attr->name, nullptr);
  EXPECT_EQ(hints->domain_attr->name, nullptr);
}

TEST(MakeHintsTest, TakesTheOptions) {
  Options options;
  options.use_hints = true;
  options.caps = FI_MSG | FI_RMA;
  options.mode = FI_CONTEXT;
  options.ep_type = FI_EP_DGRAM;
  options.addr_format = FI_SOCKADDR_IN6;
  options.provider = "udp";
  options.domain = "lo";
  options.fabric = "::1/128";
  UniqueInfo hints = MakeHints(options);
  ASSERT_NE(hints, nullptr);
  EXPECT_EQ(hints->caps, FI_MSG | FI_RMA);
  EXPECT_EQ(hints->mode, FI_CONTEXT);
  EXPECT_EQ(hints->ep_attr->type, FI_EP_DGRAM);
  EXPECT_EQ(hints->addr_format, uint32_t{FI_SOCKADDR_IN6});
  EXPECT_EQ(std::string(hints->fabric_attr->prov_name), "udp");
  EXPECT_EQ(std::string(hints->domain_attr->name), "lo");
  EXPECT_EQ(std::string(hints->fabric_attr->name), "::1/128");
}

}  // namespace
}  // namespace fi_info_tool

#include "tools/fi_info/hint_names.h"

#include <rdma/fabric.h>

#include <sstream>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

TEST(LookUpHintNameTest, FindsNamesOfEachKind) {
  uint64_t value = 0;
  EXPECT_TRUE(LookUpHintName(HintKind::kCapability, "FI_HMEM", &value));
  EXPECT_EQ(value, FI_HMEM);
  EXPECT_TRUE(LookUpHintName(HintKind::kMode, "FI_RX_CQ_DATA", &value));
  EXPECT_EQ(value, FI_RX_CQ_DATA);
  EXPECT_TRUE(
      LookUpHintName(HintKind::kEndpointType, "FI_EP_SOCK_DGRAM", &value));
  EXPECT_EQ(value, uint64_t{FI_EP_SOCK_DGRAM});
  EXPECT_TRUE(LookUpHintName(HintKind::kAddressFormat, "FI_ADDR_STR", &value));
  EXPECT_EQ(value, uint64_t{FI_ADDR_STR});
}

TEST(LookUpHintNameTest, IgnoresCase) {
  uint64_t value = 0;
  EXPECT_TRUE(LookUpHintName(HintKind::kCapability, "fi_Remote_Write", &value));
  EXPECT_EQ(value, FI_REMOTE_WRITE);
}

TEST(LookUpHintNameTest, NamesBelongToTheirKind) {
  uint64_t value = 0;
  EXPECT_FALSE(LookUpHintName(HintKind::kCapability, "FI_CONTEXT", &value));
  EXPECT_FALSE(LookUpHintName(HintKind::kMode, "FI_MSG", &value));
  EXPECT_FALSE(LookUpHintName(HintKind::kEndpointType, "FI_SOCKADDR", &value));
  EXPECT_FALSE(LookUpHintName(HintKind::kAddressFormat, "FI_EP_MSG", &value));
}

TEST(LookUpHintNameTest, AcceptsOnlyLibfabricFiInfosNames) {
  uint64_t value = 0;
  // Real capabilities and formats that libfabric's fi_info does not accept.
  EXPECT_FALSE(LookUpHintName(HintKind::kCapability, "FI_RMA_PMEM", &value));
  EXPECT_FALSE(
      LookUpHintName(HintKind::kCapability, "FI_VARIABLE_MSG", &value));
  EXPECT_FALSE(LookUpHintName(HintKind::kAddressFormat, "FI_ADDR_OPX", &value));
  EXPECT_FALSE(LookUpHintName(HintKind::kCapability, "", &value));
}

TEST(ParseHintNameListTest, OrsTheNamesAndSkipsEmptyOnes) {
  std::ostringstream errors;
  uint64_t flags = FI_ATOMIC;
  EXPECT_TRUE(ParseHintNameList(HintKind::kCapability, "|FI_MSG||fi_rma|",
                                &flags, errors));
  EXPECT_EQ(flags, FI_ATOMIC | FI_MSG | FI_RMA);
  EXPECT_EQ(errors.str(), "");
}

TEST(ParseHintNameListTest, AnEmptyListChangesNothing) {
  std::ostringstream errors;
  uint64_t flags = 0;
  EXPECT_TRUE(ParseHintNameList(HintKind::kMode, "", &flags, errors));
  EXPECT_EQ(flags, 0u);
}

TEST(ParseHintNameListTest, SpacesArePartOfTheName) {
  std::ostringstream errors;
  uint64_t flags = 0;
  EXPECT_FALSE(ParseHintNameList(HintKind::kCapability, "FI_MSG | FI_RMA",
                                 &flags, errors));
  EXPECT_EQ(errors.str(), "error: Unrecognized capability: FI_MSG \n");
}

TEST(ParseHintNameListTest, StopsAtTheFirstUnknownName) {
  std::ostringstream errors;
  uint64_t flags = 0;
  EXPECT_FALSE(ParseHintNameList(HintKind::kMode, "FI_CONTEXT|BAD1|BAD2",
                                 &flags, errors));
  EXPECT_EQ(errors.str(), "error: Unrecognized mode: BAD1\n");
}

TEST(ParseHintNameTest, TakesOneName) {
  std::ostringstream errors;
  uint64_t value = 0;
  EXPECT_TRUE(
      ParseHintName(HintKind::kEndpointType, "fi_ep_dgram", &value, errors));
  EXPECT_EQ(value, uint64_t{FI_EP_DGRAM});
  EXPECT_FALSE(ParseHintName(HintKind::kAddressFormat,
                             "FI_SOCKADDR_IN|FI_SOCKADDR_IN6", &value, errors));
  EXPECT_EQ(errors.str(),
            "error: Unrecognized address format: "
            "FI_SOCKADDR_IN|FI_SOCKADDR_IN6\n");
}

}  // namespace
}  // namespace fi_info_tool

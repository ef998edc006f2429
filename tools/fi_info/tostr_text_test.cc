#include "tools/fi_info/tostr_text.h"

#include <rdma/fabric.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

using Names = std::vector<std::string>;

TEST(SplitTostrListTest, ListsAloneAndInBrackets) {
  EXPECT_EQ(SplitTostrList("FI_MSG, FI_RMA"), (Names{"FI_MSG", "FI_RMA"}));
  EXPECT_EQ(SplitTostrList("[ FI_ORDER_STRICT ]"), Names{"FI_ORDER_STRICT"});
  EXPECT_EQ(SplitTostrList("[ FI_MSG, FI_RMA ]"), (Names{"FI_MSG", "FI_RMA"}));
}

TEST(SplitTostrListTest, EmptyListsHaveNoNames) {
  EXPECT_EQ(SplitTostrList(""), Names{});
  EXPECT_EQ(SplitTostrList("[  ]"), Names{});
  EXPECT_EQ(SplitTostrList("[]"), Names{});
}

TEST(TostrFieldTest, FindsTheFirstLineWithTheKey) {
  const std::string text =
      "fi_info:\n"
      "    src_addr: fi_sockaddr_in://127.0.0.1:0\n"
      "    dest_addr: (null)\n"
      "    fi_tx_attr:\n"
      "        comp_order: [ FI_ORDER_NONE ]\n"
      "        size: 0\n";
  EXPECT_EQ(TostrField(text, "src_addr"), "fi_sockaddr_in://127.0.0.1:0");
  EXPECT_EQ(TostrField(text, "dest_addr"), "(null)");
  EXPECT_EQ(TostrField(text, "comp_order"), "[ FI_ORDER_NONE ]");
  EXPECT_EQ(TostrField(text, "size"), "0");
}

TEST(TostrFieldTest, MatchesWholeKeysOnly) {
  const std::string text = "    src_addrlen: 16\n    fi_tx_attr:\n";
  EXPECT_EQ(TostrField(text, "src_addr"), std::nullopt);
  EXPECT_EQ(TostrField(text, "fi_tx_attr"), std::nullopt);
  EXPECT_EQ(TostrField(text, "src_addrlen"), "16");
  EXPECT_EQ(TostrField("", "size"), std::nullopt);
}

TEST(ContainsIgnoringCaseTest, WithAndWithoutSubstring) {
  EXPECT_TRUE(ContainsIgnoringCase("prov_name: tcp", std::nullopt));
  EXPECT_TRUE(ContainsIgnoringCase("prov_name: tcp", std::string("TCP")));
  EXPECT_FALSE(ContainsIgnoringCase("prov_name: tcp", std::string("udp")));
}

TEST(TostrTextTest, NamesValuesAsTheLibraryDoes) {
  const enum fi_ep_type type = FI_EP_RDM;
  EXPECT_EQ(TostrText(&type, FI_TYPE_EP_TYPE), "FI_EP_RDM");
  const uint64_t caps = FI_MSG | FI_RMA;
  EXPECT_EQ(TostrFlagNames(&caps, FI_TYPE_CAPS), (Names{"FI_MSG", "FI_RMA"}));
  const uint64_t no_caps = 0;
  EXPECT_EQ(TostrFlagNames(&no_caps, FI_TYPE_CAPS), Names{});
}

}  // namespace
}  // namespace fi_info_tool

#include "tools/fi_info/text_output.h"

#include <rdma/fabric.h>
#include <string.h>

#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tools/fi_info/hints.h"

namespace fi_info_tool {
namespace {

UniqueInfo MakeInfo(const char* provider, const char* domain) {
  UniqueInfo info(fi_allocinfo());
  info->ep_attr->type = FI_EP_MSG;
  info->ep_attr->protocol = FI_PROTO_SOCK_TCP;
  info->domain_attr->name = strdup(domain);
  info->fabric_attr->name = strdup("127.0.0.0/8");
  info->fabric_attr->prov_name = strdup(provider);
  info->fabric_attr->prov_version = FI_VERSION(118, 3);
  return info;
}

TEST(PrintProvidersTest, NameAndVersion) {
  UniqueInfo list = MakeInfo("tcp", "lo");
  list->next = MakeInfo("udp", "lo").release();
  std::ostringstream out;
  PrintProviders(list.get(), out);
  EXPECT_EQ(out.str(),
            "tcp:\n"
            "    version: 118.3\n"
            "udp:\n"
            "    version: 118.3\n");
}

TEST(PrintShortInfoTest, ProviderFabricDomainVersionTypeProtocol) {
  UniqueInfo list = MakeInfo("tcp", "lo");
  std::ostringstream out;
  PrintShortInfo(list.get(), out);
  EXPECT_EQ(out.str(),
            "provider: tcp\n"
            "    fabric: 127.0.0.0/8\n"
            "    domain: lo\n"
            "    version: 118.3\n"
            "    type: FI_EP_MSG\n"
            "    protocol: FI_PROTO_SOCK_TCP\n");
}

TEST(PrintShortInfoTest, NullNamesPrintAsPrintfDoes) {
  UniqueInfo list = MakeInfo("tcp", "lo");
  free(list->domain_attr->name);
  list->domain_attr->name = nullptr;
  std::ostringstream out;
  PrintShortInfo(list.get(), out);
  EXPECT_NE(out.str().find("    domain: (null)\n"), std::string::npos);
}

TEST(PrintLongInfoTest, EachInfoAfterThreeDashes) {
  UniqueInfo list = MakeInfo("tcp", "first_domain");
  list->next = MakeInfo("tcp", "second_domain").release();
  std::ostringstream out;
  PrintLongInfo(list.get(), std::nullopt, out);
  // fi_tostr reuses one buffer: one call a statement.
  const std::string first = fi_tostr(list.get(), FI_TYPE_INFO);
  const std::string second = fi_tostr(list->next, FI_TYPE_INFO);
  EXPECT_EQ(out.str(), "---\n" + first + "---\n" + second);
}

TEST(PrintLongInfoTest, ASubstringKeepsTheInfosWhoseTextHasIt) {
  UniqueInfo list = MakeInfo("tcp", "first_domain");
  list->next = MakeInfo("tcp", "second_domain").release();
  std::ostringstream out;
  PrintLongInfo(list.get(), std::string("Second_Domain"), out);
  EXPECT_EQ(out.str(),
            std::string("---\n") + fi_tostr(list->next, FI_TYPE_INFO));
}

}  // namespace
}  // namespace fi_info_tool

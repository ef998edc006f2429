#include "tools/fi_info/info_json.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <stdlib.h>
#include <string.h>

#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tools/fi_info/hints.h"
#include "tools/fi_info/nic_json.h"

namespace fi_info_tool {
namespace {

// An fi_info as a provider could return it: tcp, FI_EP_RDM, FI_MSG|FI_TAGGED.
UniqueInfo MakeInfo(const char* domain_name) {
  UniqueInfo info(fi_allocinfo());
  info->caps = FI_MSG | FI_TAGGED;
  info->addr_format = FI_SOCKADDR_IN;
  info->ep_attr->type = FI_EP_RDM;
  info->tx_attr->comp_order = FI_ORDER_STRICT;
  info->domain_attr->name = strdup(domain_name);
  info->domain_attr->threading = FI_THREAD_SAFE;
  info->domain_attr->resource_mgmt = FI_RM_ENABLED;
  info->domain_attr->mr_mode = FI_MR_LOCAL;
  info->fabric_attr->name = strdup("127.0.0.0/8");
  info->fabric_attr->prov_name = strdup("tcp");
  info->fabric_attr->prov_version = FI_VERSION(1, 2);
  info->fabric_attr->api_version = FI_VERSION(1, 18);
  return info;
}

std::string ListJson(const fi_info* list,
                     const std::optional<std::string>& substring) {
  std::ostringstream out;
  WriteInfoListJson(list, substring, out);
  return out.str();
}

TEST(InfoJsonTest, NamesFlagsAndEnumsAsTheLibraryDoes) {
  UniqueInfo info = MakeInfo("lo");
  const std::string json = ListJson(info.get(), std::nullopt);
  EXPECT_NE(json.find("\"caps\": [\"FI_MSG\", \"FI_TAGGED\"]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"mode\": []"), std::string::npos) << json;
  EXPECT_NE(json.find("\"addr_format\": \"FI_SOCKADDR_IN\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"type\": \"FI_EP_RDM\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"comp_order\": [\"FI_ORDER_STRICT\"]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"threading\": \"FI_THREAD_SAFE\""), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"resource_mgmt\": \"FI_RM_ENABLED\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"mr_mode\": [\"FI_MR_LOCAL\"]"), std::string::npos)
      << json;
}

TEST(InfoJsonTest, TextsNumbersAndVersions) {
  UniqueInfo info = MakeInfo("lo");
  info->tx_attr->inject_size = 128;
  const std::string json = ListJson(info.get(), std::nullopt);
  EXPECT_EQ(json.rfind("[\n  {\n    \"caps\": ", 0), 0u) << json;
  EXPECT_NE(json.find("      \"name\": \"lo\",\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"inject_size\": 128,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"prov_name\": \"tcp\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"prov_version\": \"1.2\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"api_version\": \"1.18\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"src_addr\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"dest_addr\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"nic\": null\n  }\n]\n"), std::string::npos) << json;
}

TEST(InfoJsonTest, AddressesAsVerboseOutputShowsThem) {
  UniqueInfo info = MakeInfo("lo");
  auto* address = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
  address->sin_family = AF_INET;
  address->sin_port = htons(4000);
  address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  info->src_addr = address;
  info->src_addrlen = sizeof(sockaddr_in);
  const std::string json = ListJson(info.get(), std::nullopt);
  EXPECT_NE(json.find("\"src_addrlen\": 16,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"src_addr\": \"fi_sockaddr_in://127.0.0.1:4000\""),
            std::string::npos)
      << json;
}

TEST(InfoJsonTest, MissingAttributesAreNull) {
  UniqueInfo info = MakeInfo("lo");
  fi_tx_attr* tx_attr = info->tx_attr;
  info->tx_attr = nullptr;
  std::ostringstream out;
  JsonWriter json(out);
  WriteInfoJson(json, *info, "");
  info->tx_attr = tx_attr;
  EXPECT_NE(out.str().find("\"tx_attr\": null,"), std::string::npos)
      << out.str();
}

TEST(InfoJsonTest, ASubstringKeepsTheInfosWhoseTextHasIt) {
  UniqueInfo first = MakeInfo("first_domain");
  first->next = MakeInfo("second_domain").release();
  const std::string json = ListJson(first.get(), std::string("SECOND_DOMAIN"));
  EXPECT_EQ(json.find("first_domain"), std::string::npos) << json;
  EXPECT_NE(json.find("second_domain"), std::string::npos) << json;
  EXPECT_EQ(ListJson(first.get(), std::string("no such text")), "[]\n");
}

TEST(InfoJsonTest, AnEmptyListIsAnEmptyArray) {
  EXPECT_EQ(ListJson(nullptr, std::nullopt), "[]\n");
}

TEST(NicJsonTest, DeviceBusAndLinkAttributes) {
  fi_device_attr device = {};
  device.name = const_cast<char*>("mlx5_0");
  device.driver = const_cast<char*>("mlx5");
  fi_bus_attr bus = {};
  bus.bus_type = FI_BUS_PCI;
  bus.attr.pci.domain_id = 0;
  bus.attr.pci.bus_id = 0x3b;
  bus.attr.pci.device_id = 0;
  bus.attr.pci.function_id = 1;
  fi_link_attr link = {};
  link.address = const_cast<char*>("fe80::1");
  link.mtu = 4096;
  link.speed = 100000000000;
  link.state = FI_LINK_UP;
  fid_nic nic = {};
  nic.device_attr = &device;
  nic.bus_attr = &bus;
  nic.link_attr = &link;
  std::ostringstream out;
  JsonWriter json(out);
  WriteNic(json, nic);
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"device_attr\": {\n"
            "    \"name\": \"mlx5_0\",\n"
            "    \"device_id\": null,\n"
            "    \"device_version\": null,\n"
            "    \"vendor_id\": null,\n"
            "    \"driver\": \"mlx5\",\n"
            "    \"firmware\": null\n"
            "  },\n"
            "  \"bus_attr\": {\n"
            "    \"bus_type\": 1,\n"
            "    \"pci\": {\n"
            "      \"domain_id\": 0,\n"
            "      \"bus_id\": 59,\n"
            "      \"device_id\": 0,\n"
            "      \"function_id\": 1\n"
            "    }\n"
            "  },\n"
            "  \"link_attr\": {\n"
            "    \"address\": \"fe80::1\",\n"
            "    \"mtu\": 4096,\n"
            "    \"speed\": 100000000000,\n"
            "    \"state\": 2,\n"
            "    \"network_type\": null\n"
            "  }\n"
            "}\n");
}

TEST(NicJsonTest, MissingPartsAreNull) {
  fi_bus_attr bus = {};
  bus.bus_type = FI_BUS_UNKNOWN;
  fid_nic nic = {};
  nic.bus_attr = &bus;
  std::ostringstream out;
  JsonWriter json(out);
  WriteNic(json, nic);
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"device_attr\": null,\n"
            "  \"bus_attr\": {\n"
            "    \"bus_type\": 0,\n"
            "    \"pci\": null\n"
            "  },\n"
            "  \"link_attr\": null\n"
            "}\n");
}

}  // namespace
}  // namespace fi_info_tool

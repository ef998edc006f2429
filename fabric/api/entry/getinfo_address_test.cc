// fi_getinfo(3) with addresses: node and service, FI_SOURCE, FI_ADDR_STR,
// address formats, and the provider, domain and fabric name filters.
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <string>

#include "fabric/api/entry/getinfo_testing.h"
#include "gtest/gtest.h"

namespace {

using getinfo_testing::GetInfo;
using getinfo_testing::Hints;
using getinfo_testing::In4;
using getinfo_testing::Info;
using getinfo_testing::Items;
using getinfo_testing::Provider;

TEST(GetInfoTest, NumericNodeAndServiceGiveDestination) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), "127.0.0.1", "7471", FI_NUMERICHOST),
            0);
  for (fi_info* info : Items(list)) {
    ASSERT_EQ(info->addr_format, FI_SOCKADDR_IN);
    ASSERT_EQ(info->dest_addrlen, sizeof(sockaddr_in));
    EXPECT_EQ(ntohs(In4(info->dest_addr)->sin_port), 7471);
    EXPECT_EQ(In4(info->dest_addr)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    // The kernel routes 127.0.0.1 through lo: that is the only domain offered.
    EXPECT_STREQ(info->domain_attr->name, "lo");
    EXPECT_EQ(In4(info->src_addr)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
  }
}

TEST(GetInfoTest, NumericHostRejectsNames) {
  Info list;
  EXPECT_EQ(GetInfo(&list, nullptr, "localhost", "7471", FI_NUMERICHOST),
            -FI_ENODATA);
  EXPECT_EQ(GetInfo(&list, nullptr, "localhost", "7471", 0), 0);
}

TEST(GetInfoTest, UnresolvableNodeIsEnodata) {
  Info list;
  EXPECT_EQ(GetInfo(&list, nullptr, "no-such-host.invalid", "7471", 0),
            -FI_ENODATA);
  std::string huge(5000, 'a');
  EXPECT_EQ(GetInfo(&list, nullptr, huge.c_str(), "1", 0), -FI_EINVAL);
}

TEST(GetInfoTest, Ipv6Loopback) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), "::1", "7471", FI_NUMERICHOST), 0);
  EXPECT_EQ(list->addr_format, FI_SOCKADDR_IN6);
  EXPECT_EQ(list->dest_addrlen, sizeof(sockaddr_in6));
  EXPECT_STREQ(list->domain_attr->name, "lo");
}

TEST(GetInfoTest, SourceFlagNamesTheLocalAddress) {
  Info hints = Hints();
  hints->ep_attr->type = FI_EP_MSG;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), "127.0.0.1", "7472", FI_SOURCE), 0);
  for (fi_info* info : Items(list)) {
    ASSERT_EQ(info->src_addrlen, sizeof(sockaddr_in));
    EXPECT_EQ(ntohs(In4(info->src_addr)->sin_port), 7472);
    EXPECT_EQ(info->dest_addr, nullptr);
    EXPECT_STREQ(info->domain_attr->name, "lo");
  }
  EXPECT_EQ(GetInfo(&list, hints.get(), nullptr, nullptr, FI_SOURCE),
            -FI_EINVAL);
}

TEST(GetInfoTest, SourceServiceAloneListensEverywhere) {
  Info hints = Hints();
  hints->addr_format = FI_SOCKADDR_IN;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), nullptr, "7473", FI_SOURCE), 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(In4(info->src_addr)->sin_addr.s_addr, htonl(INADDR_ANY));
    EXPECT_EQ(ntohs(In4(info->src_addr)->sin_port), 7473);
  }
}

TEST(GetInfoTest, AddrStrNode) {
  Info list;
  ASSERT_EQ(GetInfo(&list, nullptr, "fi_sockaddr_in://127.0.0.1:7474", nullptr),
            0);
  EXPECT_EQ(ntohs(In4(list->dest_addr)->sin_port), 7474);
  EXPECT_EQ(GetInfo(&list, nullptr, "fi_sockaddr_in://127.0.0.1:7474", "1"),
            -FI_EINVAL);
  EXPECT_EQ(GetInfo(&list, nullptr, "fi_bogus://127.0.0.1:7474", nullptr),
            -FI_EINVAL);
  EXPECT_EQ(GetInfo(&list, nullptr, "fi_sockaddr_in6://[::1:7474", nullptr),
            -FI_EINVAL);
  EXPECT_EQ(
      GetInfo(&list, nullptr, "fi_sockaddr_in://127.0.0.1:7474?qos", nullptr),
      -FI_EINVAL);
  ASSERT_EQ(
      GetInfo(&list, nullptr, "fi_sockaddr_in6://[::1]:7475?qos=3", nullptr),
      0);
  EXPECT_EQ(list->addr_format, FI_SOCKADDR_IN6);
}

TEST(GetInfoTest, AddrStrOutputFormat) {
  Info hints = Hints();
  hints->addr_format = FI_ADDR_STR;
  hints->fabric_attr->prov_name = strdup("tcp");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get(), "127.0.0.1", "7476"), 0);
  EXPECT_EQ(list->addr_format, FI_ADDR_STR);
  EXPECT_STREQ(static_cast<char*>(list->dest_addr),
               "fi_sockaddr_in://127.0.0.1:7476");
  EXPECT_EQ(list->dest_addrlen, strlen("fi_sockaddr_in://127.0.0.1:7476") + 1);
  EXPECT_STREQ(static_cast<char*>(list->src_addr),
               "fi_sockaddr_in://127.0.0.1:0");
}

TEST(GetInfoTest, AddrFormatSelectsFamily) {
  Info hints = Hints();
  hints->addr_format = FI_SOCKADDR_IN6;
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(info->addr_format, FI_SOCKADDR_IN6);
  }
  hints->addr_format = FI_ADDR_PSMX2;
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, ProviderNameFilter) {
  Info hints = Hints();
  hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  for (fi_info* info : Items(list)) EXPECT_EQ(Provider(info), "tcp");
  free(hints->fabric_attr->prov_name);
  hints->fabric_attr->prov_name = strdup("no_such_provider");
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

TEST(GetInfoTest, DomainAndFabricNameFilters) {
  Info hints = Hints();
  hints->domain_attr->name = strdup("lo");
  Info list;
  ASSERT_EQ(GetInfo(&list, hints.get()), 0);
  std::string fabric_name = list->fabric_attr->name;
  for (fi_info* info : Items(list)) {
    EXPECT_STREQ(info->domain_attr->name, "lo");
  }
  Info by_fabric = Hints();
  by_fabric->fabric_attr->name = strdup(fabric_name.c_str());
  ASSERT_EQ(GetInfo(&list, by_fabric.get()), 0);
  for (fi_info* info : Items(list)) {
    EXPECT_EQ(fabric_name, info->fabric_attr->name);
  }
  free(hints->domain_attr->name);
  hints->domain_attr->name = strdup("no_such_interface0");
  EXPECT_EQ(GetInfo(&list, hints.get()), -FI_ENODATA);
}

}  // namespace

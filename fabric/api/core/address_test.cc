#include "fabric/api/core/address.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

TEST(AddrStrTest, ParsesTheManPageExamples) {
  absl::StatusOr<AddrStr> v4 = ParseAddrStr("fi_sockaddr://10.31.6.12:7471");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->format, "fi_sockaddr");
  EXPECT_EQ(v4->node, "10.31.6.12");
  EXPECT_EQ(v4->service, "7471");

  absl::StatusOr<AddrStr> v6 =
      ParseAddrStr("fi_sockaddr_in6://[fe80::6:12]:7471");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->format, "fi_sockaddr_in6");
  EXPECT_EQ(v6->node, "fe80::6:12");
  EXPECT_EQ(v6->service, "7471");

  absl::StatusOr<AddrStr> query =
      ParseAddrStr("fi_sockaddr://10.31.6.12:7471/a/b?qos=3&x=y");
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->fields, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(query->query.size(), 2u);
  EXPECT_EQ(query->query[0].first, "qos");
  EXPECT_EQ(query->query[0].second, "3");
}

TEST(AddrStrTest, OptionalParts) {
  absl::StatusOr<AddrStr> bare = ParseAddrStr("fi_sockaddr_in");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->node, "");
  absl::StatusOr<AddrStr> no_port = ParseAddrStr("fi_sockaddr_in://1.2.3.4");
  ASSERT_TRUE(no_port.ok());
  EXPECT_EQ(no_port->node, "1.2.3.4");
  EXPECT_EQ(no_port->service, "");
  absl::StatusOr<AddrStr> no_node = ParseAddrStr("fi_sockaddr_in://:99");
  ASSERT_TRUE(no_node.ok());
  EXPECT_EQ(no_node->service, "99");
}

TEST(AddrStrTest, MalformedIsEinval) {
  for (const char* bad :
       {"fi_unknown://1.2.3.4:5", "fi_sockaddr_in6://[::1:5",
        "fi_sockaddr_in://1.2.3.4:5?novalue", "fi_sockaddr_in://1.2.3.4:5?=v",
        "nonsense", "fi_sockaddr_in6://[::1]x"}) {
    absl::StatusOr<AddrStr> parsed = ParseAddrStr(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(ToFiErrno(parsed.status()), -FI_EINVAL) << bad;
  }
}

TEST(AddrStrTest, FormatsBackToTheUriForm) {
  absl::StatusOr<std::vector<IpAddress>> v4 =
      ResolveIp("192.0.2.1", "7471", AF_INET, true, false);
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(FormatAddrStr(v4->front()), "fi_sockaddr_in://192.0.2.1:7471");
  absl::StatusOr<std::vector<IpAddress>> v6 =
      ResolveIp("fe80::6:12", "7471", AF_INET6, true, false);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(FormatAddrStr(v6->front()), "fi_sockaddr_in6://[fe80::6:12]:7471");
}

TEST(ResolveIpTest, NumericHostRefusesNames) {
  absl::StatusOr<std::vector<IpAddress>> r =
      ResolveIp("localhost", "1", AF_UNSPEC, /*numeric_host=*/true, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ToFiErrno(r.status()), -FI_ENODATA);
}

TEST(ResolveIpTest, BadServiceIsEinval) {
  absl::StatusOr<std::vector<IpAddress>> r =
      ResolveIp("127.0.0.1", "not-a-service-name", AF_INET, true, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ToFiErrno(r.status()), -FI_EINVAL);
}

TEST(IpFromUserTest, ChecksLengthAndFamily) {
  sockaddr_in sin = {};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(5);
  EXPECT_TRUE(IpFromUser(FI_SOCKADDR_IN, &sin, sizeof(sin)).ok());
  EXPECT_FALSE(IpFromUser(FI_SOCKADDR_IN, &sin, 4).ok());
  EXPECT_FALSE(IpFromUser(FI_SOCKADDR_IN6, &sin, sizeof(sin)).ok());
  EXPECT_FALSE(IpFromUser(FI_SOCKADDR_IN, nullptr, sizeof(sin)).ok());
  sin.sin_family = AF_UNIX;
  EXPECT_FALSE(IpFromUser(FI_SOCKADDR, &sin, sizeof(sin)).ok());
  const char text[] = "fi_sockaddr_in://127.0.0.1:80";
  absl::StatusOr<IpAddress> parsed = IpFromUser(FI_ADDR_STR, text, sizeof(text));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->port(), 80);
  // Not NUL-terminated within its length.
  EXPECT_FALSE(IpFromUser(FI_ADDR_STR, text, 5).ok());
  EXPECT_FALSE(IpFromUser(FI_ADDR_PSMX, text, sizeof(text)).ok());
}

}  // namespace
}  // namespace fabric

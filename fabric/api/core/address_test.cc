#include "fabric/api/core/address.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <string>
#include <vector>

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

// What IpFromUser makes of an FI_ADDR_STR string (its length with the NUL).
absl::StatusOr<IpAddress> FromText(const std::string& text) {
  return IpFromUser(FI_ADDR_STR, text.c_str(), text.size() + 1);
}

TEST(IpAddrStrTest, MalformedIpAddressStringsAreEinval) {
  for (const char* text : {
           "", "fi_sockaddr_in", "fi_sockaddr_in://", "fi_sockaddr_in6://",
           "fi_sockaddr_in://:7", "fi_sockaddr_in://1.2.3.4:99999",
           "fi_sockaddr_in://1.2.3.4:65536", "fi_sockaddr_in6://[::1]:99999",
           "fi_sockaddr_in://1.2.3.4:1/extra/path",
           "fi_sockaddr_in://1.2.3.4:1?k", "fi_sockaddr_in://1.2.3.4:",
           "fi_sockaddr_in://1.2.3.4:12ab", "fi_sockaddr_in://1.2.3.4:+1",
           "fi_sockaddr_in://1.2.3.4:-1", "fi_sockaddr_in://1.2.3.4:000001",
           "fi_sockaddr_in:// 1.2.3.4:1", "fi_sockaddr_in://1.2.3:1",
           "fi_sockaddr_in://localhost:1", "fi_sockaddr_in://[::1]:1",
           "fi_sockaddr_in6://::1", "fi_sockaddr_in6://1.2.3.4:1",
           "fi_sockaddr_in6://[::1]x", "fi_sockaddr://::1:1",
           "fi_sockaddr_in://1.2.3.4:1:2", "fi_sockaddr_ib://1.2.3.4:1"}) {
    absl::StatusOr<IpAddress> ip = FromText(text);
    EXPECT_FALSE(ip.ok()) << "'" << text << "' became " << ip->HostString()
                          << " port " << ip->port();
    if (!ip.ok()) EXPECT_EQ(ToFiErrno(ip.status()), -FI_EINVAL) << text;
  }
}

TEST(IpAddrStrTest, WellFormedOnesAreTakenExactly) {
  struct Case {
    const char* text;
    const char* host;
    uint16_t port;
  };
  for (const Case& c : std::vector<Case>{
           {"fi_sockaddr_in://1.2.3.4:65535", "1.2.3.4", 65535},
           {"fi_sockaddr_in://1.2.3.4", "1.2.3.4", 0},
           {"fi_sockaddr_in://10.0.0.1:0", "10.0.0.1", 0},
           {"fi_sockaddr_in6://[::1]:7", "::1", 7},
           {"fi_sockaddr://1.2.3.4:5", "1.2.3.4", 5},
           {"fi_sockaddr://[fe80::1]:5", "fe80::1", 5},
           {"fi_sockaddr://10.31.6.12:7471?qos=3", "10.31.6.12", 7471}}) {
    absl::StatusOr<IpAddress> ip = FromText(c.text);
    ASSERT_TRUE(ip.ok()) << c.text << ": " << ip.status();
    EXPECT_EQ(ip->HostString(), c.host) << c.text;
    EXPECT_EQ(ip->port(), c.port) << c.text;
  }
}

TEST(ResolveIpTest, APortPastTheRangeIsEinval) {
  for (const char* service : {"65536", "99999", "4294967297"}) {
    absl::StatusOr<std::vector<IpAddress>> r =
        ResolveIp("127.0.0.1", service, AF_INET, true, false);
    ASSERT_FALSE(r.ok()) << service;
    EXPECT_EQ(ToFiErrno(r.status()), -FI_EINVAL) << service;
  }
  EXPECT_TRUE(ResolveIp("127.0.0.1", "65535", AF_INET, true, false).ok());
}

// Mutated strings (characters replaced, inserted, removed, pieces
// repeated): never a crash, and whatever is taken is exactly what the
// string says: re-formatted, it reads back as the same address, and the
// port is the string's own decimal digits, never a wrapped value.
TEST(IpAddrStrTest, FuzzedStringsAreRefusedOrTakenExactly) {
  const std::vector<std::string> seeds = {
      "fi_sockaddr_in://192.0.2.10:7471", "fi_sockaddr_in6://[fe80::1]:80",
      "fi_sockaddr://127.0.0.1:1", "fi_sockaddr_in6://[::ffff:1.2.3.4]:65535"};
  const std::string alphabet = "0123456789:.[]/?=&%abcfx_ -+";
  uint64_t state = 0x9e3779b97f4a7c15u;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  size_t taken = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = seeds[next() % seeds.size()];
    int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = next() % text.size();
      char c = alphabet[next() % alphabet.size()];
      switch (next() % 4) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + at, c); break;
        case 2: text.erase(at, 1); break;
        default: text += text.substr(at, 3); break;
      }
    }
    absl::StatusOr<IpAddress> ip = FromText(text);
    if (!ip.ok()) {
      EXPECT_EQ(ToFiErrno(ip.status()), -FI_EINVAL) << text;
      continue;
    }
    ++taken;
    absl::StatusOr<IpAddress> again = FromText(FormatAddrStr(*ip));
    ASSERT_TRUE(again.ok()) << text;
    EXPECT_EQ(again->HostString(), ip->HostString()) << text;
    EXPECT_EQ(again->port(), ip->port()) << text;
    // The port is the string's own digits, not a wrapped value.
    text = text.substr(0, text.find('?'));
    size_t colon = text.rfind(':');
    bool has_port = colon != std::string::npos && colon + 1 < text.size() &&
                    text[colon - 1] != ':' && text.find(']', colon) ==
                                                  std::string::npos &&
                    colon > text.find("://") + 2 &&
                    (text.find('[') == std::string::npos ||
                     colon > text.find(']'));
    if (has_port) {  // decimal digits (leading zeros allowed)
      std::string digits = text.substr(colon + 1);
      ASSERT_EQ(digits.find_first_not_of("0123456789"), std::string::npos)
          << text;
      EXPECT_EQ(std::stoul(digits), ip->port()) << text;
    }
  }
  EXPECT_GT(taken, 0u);
}

}  // namespace
}  // namespace fabric

#include "fabric/providers/util/interfaces.h"

#include <sys/socket.h>

#include "gtest/gtest.h"

namespace fabric {
namespace {

IpAddress Parse(const char* host) {
  absl::StatusOr<std::vector<IpAddress>> resolved =
      ResolveIp(host, "0", AF_UNSPEC, /*numeric_host=*/true, false);
  EXPECT_TRUE(resolved.ok()) << resolved.status();
  return resolved->front();
}

TEST(InterfacesTest, NetworkNames) {
  EXPECT_EQ(NetworkName(Parse("192.0.2.77"), 24), "192.0.2.0/24");
  EXPECT_EQ(NetworkName(Parse("127.0.0.1"), 8), "127.0.0.0/8");
  EXPECT_EQ(NetworkName(Parse("10.1.2.3"), 32), "10.1.2.3/32");
  EXPECT_EQ(NetworkName(Parse("fe80::fc:ff:fe00:1"), 64), "fe80::/64");
  EXPECT_EQ(NetworkName(Parse("::1"), 128), "::1/128");
}

TEST(InterfacesTest, LoopbackIsListedLast) {
  absl::StatusOr<std::vector<IpInterface>> all = ListIpInterfaces("");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_FALSE(all->empty());
  bool seen_loopback = false;
  bool lo_v4 = false;
  for (const IpInterface& entry : *all) {
    if (entry.loopback) seen_loopback = true;
    // No non-loopback entry after a loopback one.
    EXPECT_TRUE(entry.loopback || !seen_loopback) << entry.name;
    if (entry.name == "lo" && entry.address.family() == AF_INET) {
      lo_v4 = true;
      EXPECT_EQ(entry.network, "127.0.0.0/8");
      EXPECT_EQ(entry.address.HostString(), "127.0.0.1");
      EXPECT_EQ(entry.address.port(), 0);
    }
  }
  EXPECT_TRUE(lo_v4);
}

TEST(InterfacesTest, OnlyRestrictsTheList) {
  absl::StatusOr<std::vector<IpInterface>> lo = ListIpInterfaces("lo");
  ASSERT_TRUE(lo.ok());
  ASSERT_FALSE(lo->empty());
  for (const IpInterface& entry : *lo) EXPECT_EQ(entry.name, "lo");
  absl::StatusOr<std::vector<IpInterface>> none =
      ListIpInterfaces("no_such_interface0");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace fabric

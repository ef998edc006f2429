#include "fabric/providers/util/interfaces.h"

#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

bool SetLoopbackUp(bool up) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq request = {};
  strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (ok) {
    request.ifr_flags = up ? (request.ifr_flags | IFF_UP)
                           : (request.ifr_flags & ~IFF_UP);
    ok = ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  close(fd);
  return ok;
}

bool HasLoopbackV4() {
  absl::StatusOr<std::vector<IpInterface>> all = ListIpInterfaces("");
  if (!all.ok()) return false;
  for (const IpInterface& entry : *all) {
    if (entry.address.HostString() == "127.0.0.1") return true;
  }
  return false;
}

// The list is cached until the kernel reports a change: a child process in a
// network namespace of its own (made here) brings its loopback interface up
// and down, and each change shows at once. The child also proves that a
// forked process does not reuse its parent's watch.
TEST(InterfacesTest, ChangesAreSeenAtOnce) {
  ASSERT_TRUE(HasLoopbackV4());  // the parent has read (and cached) its list
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNET) != 0) _exit(77);
    if (HasLoopbackV4()) _exit(1);  // a new namespace's lo is down
    if (!SetLoopbackUp(true)) _exit(2);
    if (!HasLoopbackV4()) _exit(3);
    if (!HasLoopbackV4()) _exit(4);  // from the cache
    if (!SetLoopbackUp(false)) _exit(5);
    if (HasLoopbackV4()) _exit(6);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    GTEST_SKIP() << "unshare(CLONE_NEWNET) not permitted here";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "child failed at step " << WEXITSTATUS(status);
  EXPECT_TRUE(HasLoopbackV4());  // the parent's view is unchanged
}

}  // namespace
}  // namespace fabric

// The socket helpers of the IP providers, on real sockets.
#include "fabric/providers/util/ip_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

int Tos(int fd) {
  int tos = -1;
  socklen_t len = sizeof(tos);
  getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &len);
  return tos;
}

TEST(IpSocketTest, TrafficClassSetsTheTosByte) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(ApplyTrafficClass(fd, AF_INET, FI_TC_UNSPEC).ok());
  EXPECT_EQ(Tos(fd), 0);
  EXPECT_TRUE(ApplyTrafficClass(fd, AF_INET, FI_TC_LOW_LATENCY).ok());
  EXPECT_EQ(Tos(fd), 46 << 2);
  EXPECT_TRUE(ApplyTrafficClass(fd, AF_INET, fi_tc_dscp_set(10)).ok());
  EXPECT_EQ(Tos(fd), 10 << 2);
  EXPECT_TRUE(ApplyTrafficClass(fd, AF_INET, FI_TC_NETWORK_CTRL).ok());
  EXPECT_EQ(Tos(fd), 48 << 2);
  EXPECT_EQ(ToFiErrno(ApplyTrafficClass(fd, AF_INET, 0x2ff)), -FI_EINVAL);
  close(fd);
}

TEST(IpSocketTest, AddressesGoOutInEachFormat) {
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  in.sin_port = htons(7471);
  inet_pton(AF_INET, "192.0.2.1", &in.sin_addr);
  absl::StatusOr<IpAddress> address =
      IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&in), sizeof(in));
  ASSERT_TRUE(address.ok());
  char buf[64];
  size_t len = sizeof(buf);
  ASSERT_EQ(CopyAddressOut(*address, FI_ADDR_STR, buf, &len), 0);
  EXPECT_EQ(std::string(buf), "fi_sockaddr_in://192.0.2.1:7471");
  EXPECT_EQ(len, std::string(buf).size() + 1);
  len = 4;
  EXPECT_EQ(CopyAddressOut(*address, FI_SOCKADDR_IN, buf, &len),
            -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  EXPECT_EQ(CopyAddressOut(*address, FI_SOCKADDR_IN6, buf, &len), -FI_EINVAL);
  EXPECT_EQ(CopyAddressOut(*address, FI_SOCKADDR, buf, nullptr), -FI_EINVAL);
  EXPECT_EQ(UserAddressLength(FI_SOCKADDR, &in), sizeof(sockaddr_in));
  EXPECT_EQ(UserAddressLength(FI_ADDR_STR, "abc"), 4u);
  EXPECT_EQ(UserAddressLength(FI_SOCKADDR_IN, nullptr), 0u);
}

TEST(IpSocketTest, NamesOfAConnectedSocket) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in any = {};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof(any)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  absl::StatusOr<IpAddress> bound = LocalAddress(listener);
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(ToFiErrno(PeerAddress(listener).status()), -FI_ENOTCONN);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, bound->sockaddr_ptr(), bound->length()), 0);
  absl::StatusOr<IpAddress> peer = PeerAddress(client);
  ASSERT_TRUE(peer.ok());
  EXPECT_EQ(peer->port(), bound->port());
  close(client);
  close(listener);
}

}  // namespace
}  // namespace fabric

// Addressing of udp endpoints: fi_getname in each address format, fi_setname,
// IPv6 sockets, and the traffic class of the datagrams sent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "fabric/providers/udp/udp_test_fixture.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

class UdpAddressTest : public UdpLoopbackTest {
 protected:
  // Sends `text` from a to b and checks b receives it.
  void Exchange(TestEndpoint& a, TestEndpoint& b, const char* text) {
    char in[64] = {};
    ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
    ASSERT_EQ(fi_send(a.ep, text, strlen(text) + 1, nullptr, b.addr, nullptr),
              0);
    fi_cq_tagged_entry got;
    ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
    EXPECT_STREQ(in, text);
  }
};

// A plain UDP socket on 127.0.0.1 and its port.
int OpenPlainSocket(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  return fd;
}

TEST_F(UdpAddressTest, GetnameGivesTheBoundSockaddr) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr);
  sockaddr_in name = {};
  size_t length = sizeof(name);
  ASSERT_EQ(fi_getname(&a.ep->fid, &name, &length), 0);
  EXPECT_EQ(length, sizeof(sockaddr_in));
  EXPECT_EQ(name.sin_family, AF_INET);
  EXPECT_EQ(ntohl(name.sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_NE(name.sin_port, 0);
}

TEST_F(UdpAddressTest, SetnameRebindsBeforeEnable) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  uint16_t port = 0;
  close(OpenPlainSocket(&port));  // a port that was free a moment ago
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &ep, nullptr), 0);
  sockaddr_in wanted = {};
  wanted.sin_family = AF_INET;
  wanted.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  wanted.sin_port = htons(port);
  ASSERT_EQ(fi_setname(&ep->fid, &wanted, sizeof(wanted)), 0);
  sockaddr_in name = {};
  size_t length = sizeof(name);
  ASSERT_EQ(fi_getname(&ep->fid, &name, &length), 0);
  EXPECT_EQ(ntohs(name.sin_port), port);
  EXPECT_EQ(fi_setname(&ep->fid, nullptr, sizeof(wanted)), -FI_EINVAL);
  sockaddr_in6 v6 = {};
  v6.sin6_family = AF_INET6;
  EXPECT_EQ(fi_setname(&ep->fid, &v6, sizeof(v6)), -FI_EINVAL);
  // The name survives failed attempts.
  ASSERT_EQ(fi_getname(&ep->fid, &name, &length), 0);
  EXPECT_EQ(ntohs(name.sin_port), port);
  EXPECT_EQ(fi_close(&ep->fid), 0);
}

TEST_F(UdpAddressTest, AddrStrEndpointsNameThemselvesAsStrings) {
  ASSERT_NO_FATAL_FAILURE(
      OpenDomain([](fi_info* hints) { hints->addr_format = FI_ADDR_STR; }));
  ASSERT_EQ(loopback_.info->addr_format, FI_ADDR_STR);
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char name[128];
  size_t length = sizeof(name);
  ASSERT_EQ(fi_getname(&a.ep->fid, name, &length), 0);
  EXPECT_EQ(length, strlen(name) + 1);
  EXPECT_EQ(std::string(name).rfind("fi_sockaddr_in", 0), 0u) << name;
  ASSERT_NO_FATAL_FAILURE(Exchange(a, b, "string-addressed"));
}

TEST_F(UdpAddressTest, Ipv6EndpointsTalkOverTheLoopback) {
  ASSERT_NO_FATAL_FAILURE(
      OpenDomain([](fi_info* hints) { hints->addr_format = FI_SOCKADDR_IN6; }));
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  sockaddr_in6 name = {};
  size_t length = sizeof(name);
  ASSERT_EQ(fi_getname(&a.ep->fid, &name, &length), 0);
  EXPECT_EQ(length, sizeof(sockaddr_in6));
  EXPECT_EQ(name.sin6_family, AF_INET6);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&name.sin6_addr));
  ASSERT_NO_FATAL_FAILURE(Exchange(a, b, "over ::1"));
}

// The TOS byte a datagram from an endpoint of a domain with `tclass`
// arrives with.
class UdpTrafficClassTest : public UdpAddressTest,
                            public ::testing::WithParamInterface<uint32_t> {};

TEST_P(UdpTrafficClassTest, DatagramsCarryTheDomainsTrafficClass) {
  uint32_t tclass = GetParam();
  ASSERT_NO_FATAL_FAILURE(OpenDomain(
      [tclass](fi_info* hints) { hints->domain_attr->tclass = tclass; }));
  EXPECT_EQ(loopback_.info->domain_attr->tclass, tclass);
  TestEndpoint& a = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr);
  uint16_t port = 0;
  int plain = OpenPlainSocket(&port);
  int on = 1;
  ASSERT_EQ(setsockopt(plain, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)), 0);
  sockaddr_in peer = {};
  peer.sin_family = AF_INET;
  peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  peer.sin_port = htons(port);
  fi_addr_t peer_addr = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(loopback_.av, &peer, 1, &peer_addr, 0, nullptr), 1);
  ASSERT_EQ(fi_send(a.ep, "tos", 4, nullptr, peer_addr, nullptr), 0);

  char data[16];
  iovec iov = {data, sizeof(data)};
  alignas(cmsghdr) char control[64];
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ASSERT_EQ(recvmsg(plain, &msg, 0), 4);
  int tos = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
      tos = *reinterpret_cast<unsigned char*>(CMSG_DATA(c));
    }
  }
  close(plain);
  EXPECT_EQ(tos, 46 << 2);  // DSCP EF
}

INSTANTIATE_TEST_SUITE_P(DscpAndLabel, UdpTrafficClassTest,
                         ::testing::Values(fi_tc_dscp_set(46),
                                           uint32_t{FI_TC_LOW_LATENCY}));

}  // namespace
}  // namespace fabric

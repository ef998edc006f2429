// Datagram (UD) addressing and discovery of the verbs provider, without a
// device: endpoint names, the sender's GID in a receive's first 40 bytes,
// and the FI_EP_DGRAM fi_info of a port.
#include "fabric/providers/verbs/verbs_ud_attr.h"

#include <arpa/inet.h>
#include <endian.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

constexpr uint32_t kVersion = FI_VERSION(118, 0);

ibv_gid Gid(uint64_t prefix, uint64_t interface_id) {
  ibv_gid gid = {};
  gid.global.subnet_prefix = htobe64(prefix);
  gid.global.interface_id = htobe64(interface_id);
  return gid;
}

// A RoCE port with soft-RoCE's limits (rxe: max_sge 32, max_cqe 32767,
// max_qp_wr 1048576) and a 1500-byte Ethernet MTU (active_mtu 1024).
PortDescription RocePort() {
  PortDescription port;
  port.device = "rxe0";
  port.device_attr.max_qp = 1048576;
  port.device_attr.max_qp_wr = 1048576;
  port.device_attr.max_sge = 32;
  port.device_attr.max_cq = 1048576;
  port.device_attr.max_cqe = 32767;
  port.device_attr.max_mr = 524288;
  port.port = 1;
  port.port_attr.state = IBV_PORT_ACTIVE;
  port.port_attr.active_mtu = IBV_MTU_1024;
  port.port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
  port.port_attr.max_msg_sz = 0x800000;
  port.gid = Gid(0xfe80000000000000ull, 0x505400fffe123456ull);
  return port;
}

TEST(UdName, RoundTripsThroughItsBytes) {
  const ibv_gid gid = Gid(0xfe80000000000000ull, 0x1122334455667788ull);
  const UdName name = MakeUdName(gid, 0x123456, 7);
  absl::StatusOr<UdName> parsed = ParseUdName(&name, sizeof(name));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(memcmp(parsed->gid, gid.raw, 16), 0);
  EXPECT_EQ(QpnOf(*parsed), 0x123456u);
  EXPECT_EQ(QkeyOf(*parsed), kUdQkey);
  EXPECT_EQ(LidOf(*parsed), 7);
  EXPECT_EQ(UdNameString(*parsed),
            "fi_addr_ib_ud://[fe80::1122:3344:5566:7788]/qpn=0x123456/"
            "qkey=0xfab0001/lid=7");
}

TEST(UdName, MalformedNamesAreRefused) {
  const UdName good = MakeUdName(Gid(0xfe80000000000000ull, 1), 9, 0);
  EXPECT_EQ(ToFiErrno(ParseUdName(nullptr, sizeof(good)).status()),
            -FI_EINVAL);
  EXPECT_EQ(ToFiErrno(ParseUdName(&good, sizeof(good) - 1).status()),
            -FI_EINVAL);
  UdName no_qp = good;
  no_qp.qpn = 0;  // fi_info's source: no endpoint yet
  EXPECT_EQ(ToFiErrno(ParseUdName(&no_qp, sizeof(no_qp)).status()),
            -FI_EINVAL);
  UdName wide = good;
  wide.qpn = htonl(0x1000000);
  EXPECT_EQ(ToFiErrno(ParseUdName(&wide, sizeof(wide)).status()),
            -FI_EINVAL);
  UdName reserved = good;
  reserved.reserved[5] = 1;
  EXPECT_EQ(ToFiErrno(ParseUdName(&reserved, sizeof(reserved)).status()),
            -FI_EINVAL);
}

TEST(SenderGid, ReadsAGrhsSourceGid) {
  uint8_t grh[kGrhSize] = {};
  grh[0] = 0x60;  // IPv6 version nibble
  const ibv_gid sender = Gid(0xfe80000000000000ull, 0xaabbccddeeff0011ull);
  memcpy(grh + 8, sender.raw, 16);
  absl::StatusOr<ibv_gid> gid = SenderGid(grh);
  ASSERT_TRUE(gid.ok()) << gid.status();
  EXPECT_EQ(memcmp(gid->raw, sender.raw, 16), 0);
}

TEST(SenderGid, MapsAnIpv4HeadersSource) {
  // RoCE v2 over IPv4: 20 bytes the device leaves zero, then the header.
  uint8_t grh[kGrhSize] = {};
  grh[20] = 0x45;
  const uint8_t source[4] = {10, 0, 2, 15};
  memcpy(grh + 32, source, 4);
  absl::StatusOr<ibv_gid> gid = SenderGid(grh);
  ASSERT_TRUE(gid.ok()) << gid.status();
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                              0, 0, 0xff, 0xff, 10, 0, 2, 15};
  EXPECT_EQ(memcmp(gid->raw, mapped, 16), 0);
}

TEST(SenderGid, RefusesBytesThatAreNeither) {
  uint8_t grh[kGrhSize] = {};
  EXPECT_EQ(ToFiErrno(SenderGid(grh).status()), -FI_EINVAL);
}

TEST(MtuBytes, CoversEveryIbMtu) {
  EXPECT_EQ(MtuBytes(IBV_MTU_256), 256u);
  EXPECT_EQ(MtuBytes(IBV_MTU_1024), 1024u);
  EXPECT_EQ(MtuBytes(IBV_MTU_4096), 4096u);
  EXPECT_EQ(MtuBytes(0), 0u);
  EXPECT_EQ(MtuBytes(6), 0u);
}

TEST(UdInfoFor, DescribesTheDatagramEndpointOfAPort) {
  absl::StatusOr<InfoPtr> info =
      UdInfoFor(RocePort(), kVersion, nullptr, nullptr, nullptr);
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_NE(*info, nullptr);
  const fi_info& ud = **info;
  EXPECT_EQ(ud.ep_attr->type, FI_EP_DGRAM);
  EXPECT_EQ(ud.ep_attr->protocol, static_cast<uint32_t>(FI_PROTO_IB_UD));
  EXPECT_EQ(ud.addr_format, static_cast<uint32_t>(FI_ADDR_IB_UD));
  EXPECT_EQ(ud.ep_attr->max_msg_size, 1024u);  // the active MTU
  EXPECT_EQ(ud.mode, 0u);  // no FI_MSG_PREFIX: the GRH has its own buffer
  EXPECT_EQ(ud.caps & (FI_RMA | FI_ATOMIC | FI_TAGGED), 0u);
  EXPECT_NE(ud.caps & FI_SOURCE, 0u);
  EXPECT_EQ(ud.rx_attr->iov_limit, 4u);  // the default, within max_sge - 2
  EXPECT_EQ(ud.tx_attr->size, 384u);
  EXPECT_STREQ(ud.domain_attr->name, "rxe0");
  EXPECT_STREQ(ud.fabric_attr->prov_name, "verbs");
  ASSERT_EQ(ud.src_addrlen, sizeof(UdName));
  const auto* source = static_cast<const UdName*>(ud.src_addr);
  EXPECT_EQ(memcmp(source->gid, RocePort().gid.raw, 16), 0);
  EXPECT_EQ(QpnOf(*source), 0u);
}

TEST(UdInfoFor, TakesTheDestinationFromTheHints) {
  InfoPtr hints(fi_allocinfo());
  hints->addr_format = FI_ADDR_IB_UD;
  const UdName peer = MakeUdName(Gid(0xfe80000000000000ull, 5), 77, 0);
  hints->dest_addr = malloc(sizeof(peer));
  memcpy(hints->dest_addr, &peer, sizeof(peer));
  hints->dest_addrlen = sizeof(peer);
  hints->rx_attr->iov_limit = 64;  // beyond max_sge - 2: the most offered
  absl::StatusOr<InfoPtr> info =
      UdInfoFor(RocePort(), kVersion, nullptr, nullptr, hints.get());
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_NE(*info, nullptr);
  ASSERT_EQ((*info)->dest_addrlen, sizeof(UdName));
  EXPECT_EQ(memcmp((*info)->dest_addr, &peer, sizeof(peer)), 0);
  EXPECT_EQ((*info)->rx_attr->iov_limit, 30u);

  UdName* bad = static_cast<UdName*>(hints->dest_addr);
  bad->qpn = 0;
  EXPECT_EQ(ToFiErrno(UdInfoFor(RocePort(), kVersion, nullptr, nullptr,
                                hints.get())
                          .status()),
            -FI_EINVAL);
}

TEST(UdInfoFor, OffersNothingForANodeOrAnotherFormat) {
  absl::StatusOr<InfoPtr> node =
      UdInfoFor(RocePort(), kVersion, "10.0.2.15", nullptr, nullptr);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(*node, nullptr);
  InfoPtr hints(fi_allocinfo());
  hints->addr_format = FI_SOCKADDR_IN;
  absl::StatusOr<InfoPtr> ip =
      UdInfoFor(RocePort(), kVersion, nullptr, nullptr, hints.get());
  ASSERT_TRUE(ip.ok());
  EXPECT_EQ(*ip, nullptr);
  // Another port's GID as the source.
  hints->addr_format = FI_ADDR_IB_UD;
  const UdName other = MakeUdName(Gid(0xfe80000000000000ull, 6), 0, 0);
  hints->src_addr = malloc(sizeof(other));
  memcpy(hints->src_addr, &other, sizeof(other));
  hints->src_addrlen = sizeof(other);
  absl::StatusOr<InfoPtr> elsewhere =
      UdInfoFor(RocePort(), kVersion, nullptr, nullptr, hints.get());
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_EQ(*elsewhere, nullptr);
}

TEST(UdInfoFor, APortThatIsNotActiveHasNone) {
  PortDescription down = RocePort();
  down.port_attr.state = IBV_PORT_DOWN;
  EXPECT_EQ(ToFiErrno(
                UdInfoFor(down, kVersion, nullptr, nullptr, nullptr).status()),
            -FI_ENODATA);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

// The verbs provider's mapping from device and port attributes to fi_info,
// fed with attributes as `ibv_devinfo -v` printed them on real devices
// (quoted in public issue threads; ports: what such devices report).
#include "fabric/providers/verbs/verbs_attr.h"

#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/ib.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <string>
#include <vector>

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

IpAddress Ip(const char* text) {
  sockaddr_storage storage = {};
  socklen_t len = 0;
  if (strchr(text, ':') != nullptr) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, text, &in6->sin6_addr);
    len = sizeof(*in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    inet_pton(AF_INET, text, &in->sin_addr);
    len = sizeof(*in);
  }
  return *IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&storage), len);
}

// A Mellanox Connect-IB HCA (ofiwg/libfabric pull request #9940): no
// atomics. One InfiniBand port, ACTIVE, with an IPoIB address.
PortDescription ConnectIb() {
  PortDescription port;
  port.device = "ibp6s0";
  ibv_device_attr& device = port.device_attr;
  device.max_mr_size = 0xffffffffffffffffull;
  device.max_qp = 262144;
  device.max_qp_wr = 32768;
  device.max_sge = 30;
  device.max_sge_rd = 30;
  device.max_cq = 16777216;
  device.max_cqe = 4194303;
  device.max_mr = 16777216;
  device.max_pd = 16777216;
  device.max_qp_rd_atom = 16;
  device.atomic_cap = IBV_ATOMIC_NONE;
  device.phys_port_cnt = 1;
  port.port = 1;
  port.port_attr.state = IBV_PORT_ACTIVE;
  port.port_attr.active_mtu = IBV_MTU_4096;
  port.port_attr.link_layer = IBV_LINK_LAYER_INFINIBAND;
  port.port_attr.max_msg_sz = 0x40000000;
  port.port_attr.lid = 7;
  port.gid = Gid(0xfe80000000000000ull, 0xf4521403006e54f1ull);
  port.ip_addresses = {Ip("192.168.100.7")};
  port.max_inline = 220;
  return port;
}

// A ConnectX-5 on Ethernet (RoCE) with atomics (openucx/ucx issues #9830,
// #10317 and #10430: device and port as printed there), with an IPv4 and
// an IPv6 address on its interface.
PortDescription ConnectX5Roce() {
  PortDescription port;
  port.device = "mlx5_bond_0";
  ibv_device_attr& device = port.device_attr;
  device.max_mr_size = 0xffffffffffffffffull;
  device.max_qp = 262144;
  device.max_qp_wr = 32768;
  device.max_sge = 30;
  device.max_cq = 16777216;
  device.max_cqe = 4194303;
  device.max_mr = 16777216;
  device.max_pd = 8388608;
  device.max_qp_rd_atom = 16;
  device.atomic_cap = IBV_ATOMIC_HCA;
  device.max_srq = 8388608;
  device.max_srq_wr = 32767;
  port.port_attr.state = IBV_PORT_ACTIVE;
  port.port_attr.max_mtu = IBV_MTU_4096;
  port.port_attr.active_mtu = IBV_MTU_1024;
  port.port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
  port.port_attr.max_msg_sz = 0x40000000;
  port.gid = Gid(0xfe80000000000000ull, 0xbacef6fffee94d5eull);
  port.ip_addresses = {Ip("10.1.2.3"), Ip("fd00::3")};
  return port;
}

// A QLogic FastLinQ (qedr) RoCE device (openucx/ucx issue #5148).
PortDescription Qedr() {
  PortDescription port;
  port.device = "qedr0";
  ibv_device_attr& device = port.device_attr;
  device.max_mr_size = 0x10000000000ull;
  device.max_qp = 8568;
  device.max_qp_wr = 32767;
  device.max_sge = 4;
  device.max_cq = 17136;
  device.max_cqe = 8388480;
  device.max_mr = 131070;
  device.max_pd = 65536;
  device.max_qp_rd_atom = 32;
  port.port_attr.state = IBV_PORT_ACTIVE;
  port.port_attr.link_layer = IBV_LINK_LAYER_ETHERNET;
  port.port_attr.max_msg_sz = 0x80000000;
  port.gid = Gid(0xfe80000000000000ull, 0xf6e9d4fffe61b108ull);
  port.ip_addresses = {Ip("10.9.9.9")};
  return port;
}

std::vector<const fi_info*> All(const InfoList& list) {
  std::vector<const fi_info*> infos;
  for (const fi_info* info = list.head(); info != nullptr; info = info->next) {
    infos.push_back(info);
  }
  return infos;
}

TEST(VerbsAttrTest, AnInfiniBandPortGivesItsGidAndItsIpoibAddress) {
  absl::StatusOr<InfoList> list = PortInfos(ConnectIb(), kVersion);
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<const fi_info*> infos = All(*list);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0]->addr_format, FI_SOCKADDR_IB);
  EXPECT_EQ(infos[1]->addr_format, FI_SOCKADDR_IN);
  ASSERT_EQ(infos[0]->src_addrlen, sizeof(sockaddr_ib));
  const auto* ib = static_cast<const sockaddr_ib*>(infos[0]->src_addr);
  EXPECT_EQ(ib->sib_family, AF_IB);
  EXPECT_EQ(memcmp(&ib->sib_addr, ConnectIb().gid.raw, 16), 0);
  ASSERT_EQ(infos[1]->src_addrlen, sizeof(sockaddr_in));
  EXPECT_EQ(
      static_cast<const sockaddr_in*>(infos[1]->src_addr)->sin_addr.s_addr,
      inet_addr("192.168.100.7"));
  for (const fi_info* info : infos) {
    EXPECT_STREQ(info->fabric_attr->name, "IB-0xfe80000000000000");
    EXPECT_STREQ(info->fabric_attr->prov_name, "verbs");
    EXPECT_EQ(info->fabric_attr->prov_version, kVersion);
    EXPECT_STREQ(info->domain_attr->name, "ibp6s0");
    EXPECT_EQ(info->ep_attr->type, FI_EP_MSG);
    EXPECT_EQ(info->ep_attr->protocol, FI_PROTO_RDMA_CM_IB_RC);
    EXPECT_EQ(info->ep_attr->max_msg_size, 0x40000000u);
    // Unless the hints ask, the defaults (within the device's 32768 and 30).
    EXPECT_EQ(info->tx_attr->size, kDefaultQueueSize);
    EXPECT_EQ(info->rx_attr->size, kDefaultQueueSize);
    EXPECT_EQ(info->tx_attr->iov_limit, kDefaultIovLimit);
    EXPECT_EQ(info->rx_attr->iov_limit, kDefaultIovLimit);
    EXPECT_EQ(info->tx_attr->rma_iov_limit, 1u);
    // The inline data its queue pairs take.
    EXPECT_EQ(info->tx_attr->inject_size, 220u);
    EXPECT_EQ(info->domain_attr->ep_cnt, 262144u);
    EXPECT_EQ(info->domain_attr->cq_cnt, 16777216u);
    EXPECT_EQ(info->domain_attr->mr_cnt, 16777216u);
    EXPECT_EQ(info->domain_attr->tx_ctx_cnt, 262144u);
    EXPECT_EQ(info->domain_attr->mr_mode, static_cast<int>(kMrModeRequired | kMrModeOptional));
    EXPECT_EQ(info->domain_attr->mr_key_size, 4u);
    EXPECT_EQ(info->domain_attr->cq_data_size, 4u);
    // ATOMIC_NONE: no FI_ATOMIC anywhere.
    EXPECT_EQ(info->caps & FI_ATOMIC, 0u);
    EXPECT_EQ(info->tx_attr->caps & FI_ATOMIC, 0u);
    EXPECT_NE(info->caps & FI_RMA, 0u);
    EXPECT_NE(info->caps & FI_MSG, 0u);
  }
}

TEST(VerbsAttrTest, ARocePortGivesItsIpAddressesAndItsAtomics) {
  absl::StatusOr<InfoList> list = PortInfos(ConnectX5Roce(), kVersion);
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<const fi_info*> infos = All(*list);
  ASSERT_EQ(infos.size(), 2u);  // no AF_IB address on Ethernet
  EXPECT_EQ(infos[0]->addr_format, FI_SOCKADDR_IN);
  EXPECT_EQ(infos[1]->addr_format, FI_SOCKADDR_IN6);
  EXPECT_EQ(infos[1]->src_addrlen, sizeof(sockaddr_in6));
  for (const fi_info* info : infos) {
    EXPECT_STREQ(info->domain_attr->name, "mlx5_bond_0");
    EXPECT_STREQ(info->fabric_attr->name, "IB-0xfe80000000000000");
    EXPECT_NE(info->caps & FI_ATOMIC, 0u);
    EXPECT_NE(info->rx_attr->caps & FI_ATOMIC, 0u);
    // The device has shared receive queues: an endpoint may take one.
    EXPECT_EQ(info->domain_attr->max_ep_srx_ctx, 1u);
  }
}

TEST(VerbsAttrTest, QueuesAreWhatTheHintsAskWithinTheDeviceLimits) {
  fi_tx_attr tx = {};
  fi_rx_attr rx = {};
  fi_info hints = {};
  hints.tx_attr = &tx;
  hints.rx_attr = &rx;
  tx.size = 1024;
  tx.iov_limit = 8;
  rx.size = 16;  // less than the default
  absl::StatusOr<InfoList> list = PortInfos(ConnectIb(), kVersion, &hints);
  ASSERT_TRUE(list.ok()) << list.status();
  const fi_info* info = list->head();
  EXPECT_EQ(info->tx_attr->size, 1024u);
  EXPECT_EQ(info->tx_attr->iov_limit, 8u);
  EXPECT_EQ(info->rx_attr->size, 16u);
  EXPECT_EQ(info->rx_attr->iov_limit, kDefaultIovLimit);
  // Hints that do not accept FI_RX_CQ_DATA get endpoints without it; no
  // hints, or hints that accept it, get it.
  EXPECT_EQ(info->mode & FI_RX_CQ_DATA, 0u);
  EXPECT_EQ(info->rx_attr->mode & FI_RX_CQ_DATA, 0u);
  hints.mode = FI_RX_CQ_DATA;
  list = PortInfos(ConnectIb(), kVersion, &hints);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->head()->mode & FI_RX_CQ_DATA, FI_RX_CQ_DATA);
  EXPECT_EQ(list->head()->rx_attr->mode & FI_RX_CQ_DATA, FI_RX_CQ_DATA);
  list = PortInfos(ConnectIb(), kVersion);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->head()->mode & FI_RX_CQ_DATA, FI_RX_CQ_DATA);
  // Beyond the device: its limit, which the core then finds short.
  tx.size = 1u << 20;
  rx.iov_limit = 64;
  list = PortInfos(ConnectIb(), kVersion, &hints);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->head()->tx_attr->size, 32768u);
  EXPECT_EQ(list->head()->rx_attr->iov_limit, 30u);
}

TEST(VerbsAttrTest, SmallDevicesGiveTheirOwnLimits) {
  fi_tx_attr tx = {};
  fi_info hints = {};
  hints.tx_attr = &tx;
  tx.size = 1u << 20;
  tx.iov_limit = 64;
  absl::StatusOr<InfoList> list = PortInfos(Qedr(), kVersion, &hints);
  ASSERT_TRUE(list.ok()) << list.status();
  const fi_info* info = list->head();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->tx_attr->size, 32767u);
  EXPECT_EQ(info->tx_attr->iov_limit, 4u);
  EXPECT_EQ(info->domain_attr->ep_cnt, 8568u);
  EXPECT_EQ(info->domain_attr->cq_cnt, 17136u);
  // Contexts: as many as both CQs and QPs allow.
  EXPECT_EQ(info->domain_attr->tx_ctx_cnt, 8568u);
  EXPECT_EQ(info->domain_attr->mr_cnt, 131070u);
  EXPECT_EQ(info->ep_attr->max_msg_size, 0x80000000u);
  EXPECT_EQ(info->domain_attr->max_ep_srx_ctx, 0u);
}

// Soft-RoCE (rxe, as ibv_devinfo -v shows it in the guest): queues may be
// far deeper than a CQ.
TEST(VerbsAttrTest, QueuesFitTheCqTheirCompletionsShare) {
  PortDescription rxe = Qedr();
  rxe.device = "rxe0";
  rxe.device_attr.max_qp = 1048560;
  rxe.device_attr.max_qp_wr = 1048576;
  rxe.device_attr.max_sge = 32;
  rxe.device_attr.max_cq = 1048576;
  rxe.device_attr.max_cqe = 32767;
  fi_tx_attr tx = {};
  fi_rx_attr rx = {};
  fi_info hints = {};
  hints.tx_attr = &tx;
  hints.rx_attr = &rx;
  tx.size = rx.size = 1u << 20;
  absl::StatusOr<InfoList> list = PortInfos(rxe, kVersion, &hints);
  ASSERT_TRUE(list.ok()) << list.status();
  const fi_info* info = list->head();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->tx_attr->size, 16383u);
  EXPECT_EQ(info->rx_attr->size, 16383u);
  EXPECT_LE(info->tx_attr->size + info->rx_attr->size, 32767u);
}

TEST(VerbsAttrTest, PortsThatOfferNothingSayWhy) {
  PortDescription down = ConnectIb();
  down.port_attr.state = IBV_PORT_DOWN;
  absl::StatusOr<InfoList> list = PortInfos(down, kVersion);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(ToFiErrno(list.status()), -FI_ENODATA);
  EXPECT_NE(list.status().message().find("ibp6s0 port 1 is not ACTIVE"),
            std::string::npos)
      << list.status();

  PortDescription no_ip = ConnectX5Roce();
  no_ip.ip_addresses.clear();
  list = PortInfos(no_ip, kVersion);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("without an IP address"),
            std::string::npos)
      << list.status();

  PortDescription odd = ConnectIb();
  odd.port_attr.link_layer = 7;
  list = PortInfos(odd, kVersion);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.status().message().find("unknown link layer 7"),
            std::string::npos)
      << list.status();

  // A device reporting a negative limit offers none of that resource.
  PortDescription broken = Qedr();
  broken.device_attr.max_qp_wr = -1;
  list = PortInfos(broken, kVersion);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->head()->tx_attr->size, 0u);
}

TEST(VerbsAttrTest, FabricNamesFollowTheSubnetPrefix) {
  EXPECT_EQ(FabricName(Gid(0xfe80000000000000ull, 1)), "IB-0xfe80000000000000");
  EXPECT_EQ(FabricName(Gid(0x0012345600000000ull, 1)), "IB-0x0012345600000000");
}

TEST(VerbsAttrTest, TheInfiniBandAddressIsOfferedOnlyWhenAsked) {
  absl::StatusOr<InfoList> list = PortInfos(ConnectIb(), kVersion);
  ASSERT_TRUE(list.ok()) << list.status();
  const fi_info& ib = *list->head();
  ASSERT_EQ(ib.addr_format, FI_SOCKADDR_IB);
  const auto* own = static_cast<const sockaddr_ib*>(ib.src_addr);

  // No request: the GID as it is.
  absl::StatusOr<InfoPtr> got = IbInfoFor(ib, nullptr, nullptr, nullptr);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_NE(*got, nullptr);
  EXPECT_EQ(memcmp((*got)->src_addr, own, sizeof(*own)), 0);
  // A node or service is an IP address: nothing.
  got = IbInfoFor(ib, "192.168.100.7", nullptr, nullptr);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, nullptr);
  got = IbInfoFor(ib, nullptr, "7471", nullptr);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, nullptr);

  fi_info hints = {};
  hints.addr_format = FI_SOCKADDR_IN;
  got = IbInfoFor(ib, nullptr, nullptr, &hints);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, nullptr);

  // FI_SOCKADDR_IB hints naming this GID with a service ID, and a peer:
  // kept (what fi_domain and fi_endpoint see again).
  sockaddr_ib source = *own;
  source.sib_sid = htobe64(0x0106000000001d2full);
  sockaddr_ib peer = *own;
  peer.sib_addr.sib_raw[15] ^= 1;
  hints.addr_format = FI_SOCKADDR_IB;
  hints.src_addr = &source;
  hints.src_addrlen = sizeof(source);
  hints.dest_addr = &peer;
  hints.dest_addrlen = sizeof(peer);
  got = IbInfoFor(ib, nullptr, nullptr, &hints);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_NE(*got, nullptr);
  EXPECT_EQ(memcmp((*got)->src_addr, &source, sizeof(source)), 0);
  ASSERT_EQ((*got)->dest_addrlen, sizeof(peer));
  EXPECT_EQ(memcmp((*got)->dest_addr, &peer, sizeof(peer)), 0);
  // Another port's GID, or a short address: not this port.
  hints.src_addr = &peer;
  got = IbInfoFor(ib, nullptr, nullptr, &hints);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, nullptr);
  hints.src_addr = &source;
  hints.src_addrlen = sizeof(source) - 1;
  got = IbInfoFor(ib, nullptr, nullptr, &hints);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, nullptr);
}

TEST(VerbsAttrTest, RdmInfosAreNamedAndAddressedAsTheirMsgInfo) {
  absl::StatusOr<InfoList> list = PortInfos(ConnectIb(), kVersion);
  ASSERT_TRUE(list.ok()) << list.status();
  const fi_info& msg = *list->head()->next;  // the IPoIB address
  ASSERT_EQ(msg.addr_format, FI_SOCKADDR_IN);
  InfoPtr rdm_template(fi_allocinfo());
  rdm_template->ep_attr->type = FI_EP_RDM;
  rdm_template->caps = FI_MSG | FI_TAGGED;
  absl::StatusOr<InfoPtr> rdm = RdmInfoFor(msg, *rdm_template);
  ASSERT_TRUE(rdm.ok()) << rdm.status();
  const fi_info& info = **rdm;
  EXPECT_EQ(info.ep_attr->type, FI_EP_RDM);
  EXPECT_EQ(info.ep_attr->protocol, FI_PROTO_RXM);
  EXPECT_EQ(info.caps, FI_MSG | FI_TAGGED);
  EXPECT_STREQ(info.fabric_attr->name, msg.fabric_attr->name);
  EXPECT_STREQ(info.fabric_attr->prov_name, "verbs");
  EXPECT_EQ(info.fabric_attr->prov_version, kVersion);
  EXPECT_STREQ(info.domain_attr->name, "ibp6s0");
  EXPECT_EQ(info.addr_format, FI_SOCKADDR_IN);
  ASSERT_EQ(info.src_addrlen, msg.src_addrlen);
  EXPECT_EQ(memcmp(info.src_addr, msg.src_addr, msg.src_addrlen), 0);
  EXPECT_EQ(info.dest_addr, nullptr);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

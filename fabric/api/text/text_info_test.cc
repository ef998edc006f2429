// fi_tostr of attribute structures and of fi_info, with every address
// format, compared with Debian's libfabric 1.17 text and buffer bytes.
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "fabric/api/text/text_testing.h"
#include "gtest/gtest.h"

namespace {

using text_testing::CompareTest;
using text_testing::Fids;
using text_testing::Ours;

// Attributes with the fields set to something visible.
struct Attrs {
  Attrs() {
    tx.caps = FI_MSG | FI_SEND | FI_HMEM;
    tx.mode = FI_CONTEXT;
    tx.op_flags = FI_INJECT;
    tx.msg_order = FI_ORDER_SAS | FI_ORDER_RMA_WAW;
    tx.comp_order = FI_ORDER_STRICT;
    tx.inject_size = 64;
    tx.size = 1024;
    tx.iov_limit = 4;
    tx.rma_iov_limit = 1;
    tx.tclass = 0x1a0;

    rx.caps = FI_MSG | FI_RECV | FI_SOURCE;
    rx.mode = FI_MSG_PREFIX;
    rx.op_flags = FI_MULTI_RECV | FI_COMPLETION;
    rx.msg_order = FI_ORDER_RAR;
    rx.comp_order = FI_ORDER_DATA;
    rx.total_buffered_recv = 16384;
    rx.size = 512;
    rx.iov_limit = 8;

    ep.type = FI_EP_RDM;
    ep.protocol = FI_PROTO_RXM;
    ep.protocol_version = 3;
    ep.max_msg_size = 1 << 20;
    ep.max_order_raw_size = 65536;
    ep.max_order_waw_size = SIZE_MAX;
    ep.mem_tag_format = 0xaaaaaaaaaaaaaaaa;
    ep.tx_ctx_cnt = FI_SHARED_CONTEXT;
    ep.rx_ctx_cnt = 2;
    ep.auth_key_size = sizeof(auth_key);
    ep.auth_key = auth_key;

    domain.domain = reinterpret_cast<fid_domain*>(0x1234);
    domain.name = domain_name;
    domain.threading = FI_THREAD_DOMAIN;
    domain.control_progress = FI_PROGRESS_AUTO;
    domain.data_progress = FI_PROGRESS_MANUAL;
    domain.resource_mgmt = FI_RM_ENABLED;
    domain.av_type = FI_AV_TABLE;
    domain.mr_mode = FI_MR_LOCAL | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
    domain.mr_key_size = 8;
    domain.cq_cnt = 1024;
    domain.tx_ctx_cnt = FI_SHARED_CONTEXT;
    domain.max_ep_tx_ctx = 1;
    domain.cntr_cnt = 16;
    domain.caps = FI_LOCAL_COMM;
    domain.auth_key = auth_key;
    domain.auth_key_size = sizeof(auth_key);
    domain.mr_cnt = SIZE_MAX;
    domain.tclass = FI_TC_BULK_DATA;

    fabric.name = fabric_name;
    fabric.prov_name = prov_name;
    fabric.prov_version = FI_VERSION(117, 0);
    fabric.api_version = FI_VERSION(1, 17);
  }

  uint8_t auth_key[4] = {1, 2, 3, 4};
  char domain_name[6] = "mlx_0";
  char fabric_name[12] = "10.0.0.0/8";
  char prov_name[12] = "tcp;ofi_rxm";
  fi_tx_attr tx = {};
  fi_rx_attr rx = {};
  fi_ep_attr ep = {};
  fi_domain_attr domain = {};
  fi_fabric_attr fabric = {};
};

// Stores any int, as C code may, without forming an out-of-range C++ enum.
template <typename Enum>
void SetEnum(Enum& field, int value) {
  static_assert(sizeof(Enum) == sizeof(value));
  memcpy(&field, &value, sizeof(value));
}

TEST_F(CompareTest, AttrsMatchDebian) {
  Attrs attrs;
  ExpectSame(&attrs.tx, FI_TYPE_TX_ATTR);
  ExpectSame(&attrs.rx, FI_TYPE_RX_ATTR);
  ExpectSame(&attrs.ep, FI_TYPE_EP_ATTR);
  ExpectSame(&attrs.domain, FI_TYPE_DOMAIN_ATTR);
  ExpectSame(&attrs.fabric, FI_TYPE_FABRIC_ATTR);

  Attrs zeros;
  memset(&zeros.tx, 0, sizeof(zeros.tx));
  memset(&zeros.rx, 0, sizeof(zeros.rx));
  memset(&zeros.ep, 0, sizeof(zeros.ep));
  memset(&zeros.domain, 0, sizeof(zeros.domain));
  memset(&zeros.fabric, 0, sizeof(zeros.fabric));
  ExpectSame(&zeros.tx, FI_TYPE_TX_ATTR);
  ExpectSame(&zeros.rx, FI_TYPE_RX_ATTR);
  ExpectSame(&zeros.ep, FI_TYPE_EP_ATTR);
  ExpectSame(&zeros.domain, FI_TYPE_DOMAIN_ATTR);
  ExpectSame(&zeros.fabric, FI_TYPE_FABRIC_ATTR);

  Attrs ones;
  memset(&ones.tx, 0xff, sizeof(ones.tx));
  memset(&ones.rx, 0xff, sizeof(ones.rx));
  memset(&ones.ep, 0xff, sizeof(ones.ep));
  memset(&ones.domain, 0xff, sizeof(ones.domain));
  memset(&ones.fabric, 0xff, sizeof(ones.fabric));
  ones.domain.name = ones.domain_name;
  ones.fabric.name = ones.fabric_name;
  ones.fabric.prov_name = ones.prov_name;
  ExpectSame(&ones.tx, FI_TYPE_TX_ATTR);
  ExpectSame(&ones.rx, FI_TYPE_RX_ATTR);
  ExpectSame(&ones.ep, FI_TYPE_EP_ATTR);
  ExpectSame(&ones.domain, FI_TYPE_DOMAIN_ATTR);
  ExpectSame(&ones.fabric, FI_TYPE_FABRIC_ATTR);

  for (int value : {-1, 3, 99}) {
    SetEnum(zeros.domain.threading, value);
    SetEnum(zeros.domain.control_progress, value);
    SetEnum(zeros.domain.data_progress, value);
    SetEnum(zeros.domain.resource_mgmt, value);
    SetEnum(zeros.domain.av_type, value);
    zeros.domain.mr_mode = value;
    SetEnum(zeros.ep.type, value);
    zeros.ep.protocol = value;
    zeros.ep.protocol_version = value;
    ExpectSame(&zeros.domain, FI_TYPE_DOMAIN_ATTR);
    ExpectSame(&zeros.ep, FI_TYPE_EP_ATTR);
  }
}

TEST(AttrsTest, Layout) {
  Attrs attrs;
  EXPECT_EQ(Ours(&attrs.fabric, FI_TYPE_FABRIC_ATTR),
            "fi_fabric_attr:\n"
            "    name: 10.0.0.0/8\n"
            "    prov_name: tcp;ofi_rxm\n"
            "    prov_version: 117.0\n"
            "    api_version: 1.17\n");
  std::string ep = Ours(&attrs.ep, FI_TYPE_EP_ATTR);
  EXPECT_NE(ep.find("\n    tx_ctx_cnt: FI_SHARED_CONTEXT\n"),
            std::string::npos);
  EXPECT_NE(ep.find("\n    mem_tag_format: 0xaaaaaaaaaaaaaaaa\n"),
            std::string::npos);
  std::string tx = Ours(&attrs.tx, FI_TYPE_TX_ATTR);
  EXPECT_NE(tx.find("\n    comp_order: [ FI_ORDER_STRICT ]\n"),
            std::string::npos);
  EXPECT_NE(tx.find("\n    tclass: 0x1a0\n"), std::string::npos);
}

// Addresses of every format; the bytes are a pattern, so every field shows.
struct Addresses {
  Addresses() {
    for (size_t i = 0; i < sizeof(pattern); ++i) {
      pattern[i] = static_cast<uint8_t>(i * 7 + 3);
      reverse[i] = static_cast<uint8_t>(0xff - i);
    }
    in4.sin_family = AF_INET;
    in4.sin_port = htons(7471);
    inet_pton(AF_INET, "192.0.2.17", &in4.sin_addr);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(65535);
    inet_pton(AF_INET6, "fe80::fc:ff:fe00:1", &in6.sin6_addr);
    in6.sin6_scope_id = 2;
  }

  // Room for any format's reads beyond the structure.
  alignas(8) uint8_t pattern[64];
  alignas(8) uint8_t reverse[64];
  alignas(8) uint8_t zeros[64] = {};
  sockaddr_in in4 = {};
  uint8_t in4_tail[32] = {};
  sockaddr_in6 in6 = {};
  uint8_t in6_tail[32] = {};
};

class InfoTest : public CompareTest {
 protected:
  // An info with every attribute and a handle and nic to print.
  fi_info Full() {
    fi_info info = {};
    info.caps = FI_MSG | FI_RMA | FI_TAGGED | FI_REMOTE_COMM;
    info.mode = FI_CONTEXT | FI_RX_CQ_DATA;
    info.addr_format = FI_SOCKADDR_IN;
    info.src_addrlen = sizeof(addresses_.in4);
    info.src_addr = &addresses_.in4;
    info.handle = &handle_fid_;
    info.tx_attr = &attrs_.tx;
    info.rx_attr = &attrs_.rx;
    info.ep_attr = &attrs_.ep;
    info.domain_attr = &attrs_.domain;
    info.fabric_attr = &attrs_.fabric;
    info.nic = &nic_;
    return info;
  }

  Attrs attrs_;
  Addresses addresses_;
  Fids fids_;
  fid handle_fid_ = {FI_CLASS_PEP, nullptr, &fids_.with_tostr};
  fid_nic nic_ = {};
};

TEST_F(InfoTest, EmptyInfoMatchesDebian) {
  fi_info info = {};
  ExpectSame(&info, FI_TYPE_INFO);
  EXPECT_EQ(Ours(&info, FI_TYPE_INFO),
            "fi_info:\n"
            "    caps: [  ]\n"
            "    mode: [  ]\n"
            "    addr_format: FI_FORMAT_UNSPEC\n"
            "    src_addrlen: 0\n"
            "    dest_addrlen: 0\n"
            "    src_addr: (null)\n"
            "    dest_addr: (null)\n"
            "    handle: (nil)\n"
            "    fi_tx_attr: (null)\n"
            "    fi_rx_attr: (null)\n"
            "    fi_ep_attr: (null)\n"
            "    fi_domain_attr: (null)\n"
            "    fi_fabric_attr: (null)\n"
            "    nic: (nil)\n");
}

TEST_F(InfoTest, FullInfoMatchesDebian) {
  fi_info info = Full();
  ExpectSame(&info, FI_TYPE_INFO);
  info.handle = nullptr;
  info.nic->fid.ops = &fids_.null_tostr;
  ExpectSame(&info, FI_TYPE_INFO);
  info.nic->fid.ops = &fids_.with_tostr;
  ExpectSame(&info, FI_TYPE_INFO);
  fi_info second = Full();
  info.next = &second;  // only the first is printed
  ExpectSame(&info, FI_TYPE_INFO);
}

TEST_F(InfoTest, IpAddressesMatchDebian) {
  fi_info info = Full();
  info.handle = nullptr;
  info.addr_format = FI_SOCKADDR_IN;
  info.dest_addrlen = sizeof(addresses_.in4);
  info.dest_addr = &addresses_.in4;
  ExpectSame(&info, FI_TYPE_INFO);
  EXPECT_NE(Ours(&info, FI_TYPE_INFO)
                .find("    src_addr: fi_sockaddr_in://192.0.2.17:7471\n"),
            std::string::npos);

  info.addr_format = FI_SOCKADDR_IN6;
  info.src_addr = &addresses_.in6;
  info.src_addrlen = sizeof(addresses_.in6);
  info.dest_addr = nullptr;
  info.dest_addrlen = 0;
  ExpectSame(&info, FI_TYPE_INFO);
  EXPECT_NE(
      Ours(&info, FI_TYPE_INFO)
          .find("    src_addr: fi_sockaddr_in6://[fe80::fc:ff:fe00:1]:65535\n"),
      std::string::npos);

  // FI_SOCKADDR goes by the family; the specific formats print whatever
  // family the address has.
  for (uint32_t format :
       {FI_SOCKADDR, FI_SOCKADDR_IN, FI_SOCKADDR_IN6, FI_SOCKADDR_IB}) {
    info.addr_format = format;
    info.src_addr = &addresses_.in4;
    info.dest_addr = &addresses_.in6;
    ExpectSame(&info, FI_TYPE_INFO);
  }
}

TEST_F(InfoTest, EveryAddressFormatMatchesDebian) {
  fi_info info = {};
  std::vector<uint32_t> formats;
  for (uint32_t format = FI_FORMAT_UNSPEC; format <= FI_ADDR_CXI + 2;
       ++format) {
    formats.push_back(format);
  }
  formats.push_back(FI_PROV_SPECIFIC | FI_SOCKADDR_IN);
  const sa_family_t families[] = {AF_INET, AF_INET6, AF_UNIX, 27 /* AF_IB */,
                                  0x6669};
  for (uint32_t format : formats) {
    info.addr_format = format;
    for (uint8_t* bytes :
         {addresses_.pattern, addresses_.reverse, addresses_.zeros}) {
      info.src_addr = bytes;
      info.dest_addr = addresses_.pattern;
      ExpectSame(&info, FI_TYPE_INFO);
    }
    for (sa_family_t family : families) {
      memcpy(addresses_.pattern, &family, sizeof(family));
      memcpy(addresses_.reverse, &family, sizeof(family));
      info.src_addr = addresses_.pattern;
      info.dest_addr = addresses_.reverse;
      ExpectSame(&info, FI_TYPE_INFO);
    }
  }
}

TEST_F(InfoTest, StringAddressesMatchDebian) {
  fi_info info = Full();
  info.handle = nullptr;
  info.addr_format = FI_ADDR_STR;
  std::string long_name(300, 'a');
  for (const char* name :
       {"fi_sockaddr_in://127.0.0.1:0", "", "a, b, c, ", long_name.c_str()}) {
    info.src_addr = const_cast<char*>(name);
    info.dest_addr = const_cast<char*>("fi_addr_str://peer");
    ExpectSame(&info, FI_TYPE_INFO);
  }
}

TEST_F(InfoTest, NullAttrsMatchDebian) {
  fi_info info = Full();
  info.tx_attr = nullptr;
  info.ep_attr = nullptr;
  info.fabric_attr = nullptr;
  ExpectSame(&info, FI_TYPE_INFO);
  info = Full();
  info.rx_attr = nullptr;
  info.domain_attr = nullptr;
  info.nic = nullptr;
  ExpectSame(&info, FI_TYPE_INFO);
}

TEST_F(CompareTest, GetinfoResultsMatchDebian) {
  fi_info* list = nullptr;
  ASSERT_EQ(
      debian_.getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &list),
      0);
  ASSERT_NE(list, nullptr);
  int count = 0;
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    ExpectSame(info, FI_TYPE_INFO);
    ExpectSame(info->tx_attr, FI_TYPE_TX_ATTR);
    ExpectSame(info->domain_attr, FI_TYPE_DOMAIN_ATTR);
    std::string ours = fi_tostr(info, FI_TYPE_INFO);
    EXPECT_EQ(ours, debian_.tostr(info, FI_TYPE_INFO));
    ++count;
  }
  EXPECT_GT(count, 0);
  debian_.freeinfo(list);
}

}  // namespace

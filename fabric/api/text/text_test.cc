// fi_tostr_r, fi_tostr and fi_strerror against Debian's libfabric 1.17, loaded
// with dlopen: the same bytes for every value, at every buffer length.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr char kDebianLibrary[] = "/usr/lib/x86_64-linux-gnu/libfabric.so.1";

// The sanitizers refuse RTLD_DEEPBIND. Without it, Debian's fi_tostr may
// call our fi_tostr_r when ours is in a shared object (Bazel links tests
// dynamically); Debian's fi_tostr_r, called through dlsym, is unaffected.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

// Larger than any text in these tests.
constexpr size_t kLargeBuffer = 1 << 16;

// fi_tostr_r with the type as the int it is in C, so that tests can pass
// types the enum has no value for.
using TostrR = char* (*)(char*, size_t, const void*, int);

struct Debian {
  TostrR tostr_r;
  decltype(&fi_tostr) tostr;
  decltype(&fi_strerror) strerror;
  decltype(&fi_getinfo) getinfo;
  decltype(&fi_freeinfo) freeinfo;
};

class TextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FI_PROVIDER", "tcp", 1);
    handle_ = dlopen(kDebianLibrary, kDlopenFlags);
    if (handle_ == nullptr) return;
    debian_.tostr_r = Symbol<TostrR>("fi_tostr_r");
    debian_.tostr = Symbol<decltype(&fi_tostr)>("fi_tostr");
    debian_.strerror = Symbol<decltype(&fi_strerror)>("fi_strerror");
    debian_.getinfo = Symbol<decltype(&fi_getinfo)>("fi_getinfo");
    debian_.freeinfo = Symbol<decltype(&fi_freeinfo)>("fi_freeinfo");
  }

  void SetUp() override {
    ASSERT_NE(handle_, nullptr) << dlerror();
    ASSERT_NE(debian_.tostr_r, nullptr);
    ASSERT_NE(debian_.tostr, nullptr);
    ASSERT_NE(debian_.strerror, nullptr);
    ASSERT_NE(debian_.getinfo, nullptr);
    ASSERT_NE(debian_.freeinfo, nullptr);
  }

  template <typename F>
  static F Symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }

  static void* handle_;
  static Debian debian_;
};

void* TextTest::handle_ = nullptr;
Debian TextTest::debian_ = {};

// The whole buffer after a call with a buffer of len bytes, prefilled with a
// pattern; "(returned NULL)" when the call returned NULL.
std::string Call(TostrR tostr_r, size_t len, const void* data, int type) {
  std::vector<char> buf(len + 1, '#');
  char* text = tostr_r(buf.data(), len, data, type);
  if (text == nullptr) return "(returned NULL)";
  EXPECT_EQ(text, buf.data());
  return std::string(buf.data(), len);
}

const TostrR kOurTostrR = reinterpret_cast<TostrR>(&fi_tostr_r);

std::string Ours(const void* data, int type, size_t len = kLargeBuffer) {
  std::string bytes = Call(kOurTostrR, len, data, type);
  return bytes.substr(0, strnlen(bytes.c_str(), len));
}

class CompareTest : public TextTest {
 protected:
  std::string Theirs(const void* data, int type) {
    std::string bytes = Call(debian_.tostr_r, kLargeBuffer, data, type);
    return bytes.substr(0, strnlen(bytes.c_str(), kLargeBuffer));
  }

  // Same text at full length, and same buffer bytes at every length up to
  // and past it.
  void ExpectSame(const void* data, int type) {
    std::string full = Theirs(data, type);
    ASSERT_EQ(Ours(data, type), full) << "type " << type;
    for (size_t len = 0; len <= full.size() + 2; ++len) {
      ASSERT_EQ(Call(kOurTostrR, len, data, type),
                Call(debian_.tostr_r, len, data, type))
          << "type " << type << ", buffer of " << len << " bytes, full text:\n"
          << full;
    }
  }

  // An int-sized enum value with garbage above it, so that reading more than
  // the value would show.
  void ExpectSameEnum(int64_t value, int type) {
    uint64_t data = 0xa5a5a5a500000000ULL | static_cast<uint32_t>(value);
    ExpectSame(&data, type);
  }
};

// strerror's text for unknown codes lasts only until the next call.
void ExpectSameStrError(int code, decltype(&fi_strerror) debian_strerror) {
  std::string ours = fi_strerror(code);
  EXPECT_EQ(ours, debian_strerror(code)) << code;
}

TEST_F(TextTest, StrErrorMatchesDebianForEveryCode) {
  for (int code = -300; code <= 300; ++code) {
    ExpectSameStrError(code, debian_.strerror);
  }
  for (int code : {INT_MIN, INT_MIN + 1, INT_MAX, 1000, -1000, 4096}) {
    ExpectSameStrError(code, debian_.strerror);
  }
}

TEST_F(TextTest, StrErrorMessages) {
  EXPECT_STREQ(fi_strerror(FI_ETRUNC), "Truncation error");
  EXPECT_STREQ(fi_strerror(-FI_ENORX),
               "Receiver not ready, no receive buffers available");
  EXPECT_STREQ(fi_strerror(FI_ERRNO_MAX), "Unspecified error");
  EXPECT_STREQ(fi_strerror(-FI_EAGAIN), strerror(EAGAIN));
  EXPECT_STREQ(fi_strerror(0), "Success");
}

struct EnumType {
  fi_type type;
  int last;  // the last value with a name in the 1.17 headers
};

constexpr EnumType kEnumTypes[] = {
    {FI_TYPE_EP_TYPE, FI_EP_SOCK_DGRAM},
    {FI_TYPE_ADDR_FORMAT, FI_ADDR_CXI},
    {FI_TYPE_THREADING, FI_THREAD_ENDPOINT},
    {FI_TYPE_PROGRESS, FI_PROGRESS_MANUAL},
    {FI_TYPE_PROTOCOL, FI_PROTO_XNET},
    {FI_TYPE_AV_TYPE, FI_AV_TABLE},
    {FI_TYPE_ATOMIC_TYPE, FI_UINT128},
    {FI_TYPE_ATOMIC_OP, FI_MSWAP},
    {FI_TYPE_EQ_EVENT, FI_JOIN_COMPLETE},
    {FI_TYPE_OP_TYPE, FI_OP_CNTR_ADD},
    {FI_TYPE_COLLECTIVE_OP, FI_GATHER},
    {FI_TYPE_HMEM_IFACE, FI_HMEM_SYNAPSEAI},
    {FI_TYPE_CQ_FORMAT, FI_CQ_FORMAT_TAGGED},
    {FI_TYPE_LOG_LEVEL, FI_LOG_DEBUG},
    {FI_TYPE_LOG_SUBSYS, FI_LOG_CNTR},
};

TEST_F(CompareTest, EnumTypesMatchDebianForEveryValue) {
  for (const EnumType& entry : kEnumTypes) {
    for (int64_t value = -2; value <= entry.last + 3; ++value) {
      ExpectSameEnum(value, entry.type);
    }
    for (int64_t value : {int64_t{INT_MIN}, int64_t{INT_MAX},
                          int64_t{FI_PROV_SPECIFIC}, int64_t{0x80000001}}) {
      ExpectSameEnum(value, entry.type);
    }
  }
}

TEST(EnumNamesTest, Names) {
  int rdm = FI_EP_RDM;
  EXPECT_EQ(Ours(&rdm, FI_TYPE_EP_TYPE), "FI_EP_RDM");
  uint32_t format = FI_SOCKADDR_IN6;
  EXPECT_EQ(Ours(&format, FI_TYPE_ADDR_FORMAT), "FI_SOCKADDR_IN6");
  format = FI_PROV_SPECIFIC | FI_SOCKADDR;
  EXPECT_EQ(Ours(&format, FI_TYPE_ADDR_FORMAT), "Provider specific");
  uint32_t mxm = FI_PROTO_MXM;
  EXPECT_EQ(Ours(&mxm, FI_TYPE_PROTOCOL), "Unknown");
  int level = FI_LOG_TRACE;
  EXPECT_EQ(Ours(&level, FI_TYPE_LOG_LEVEL), "trace");
  int subsys = FI_LOG_CNTR;
  EXPECT_EQ(Ours(&subsys, FI_TYPE_LOG_SUBSYS), "cntr");
  subsys = FI_LOG_SUBSYS_MAX;
  EXPECT_EQ(Ours(&subsys, FI_TYPE_LOG_SUBSYS), "Unknown");
  int op = FI_CSWAP_GE;
  EXPECT_EQ(Ours(&op, FI_TYPE_ATOMIC_OP), "FI_CSWAP_GE");
}

constexpr fi_type kFlagTypes[] = {
    FI_TYPE_CAPS, FI_TYPE_OP_FLAGS,       FI_TYPE_MSG_ORDER,
    FI_TYPE_MODE, FI_TYPE_CQ_EVENT_FLAGS, FI_TYPE_MR_MODE,
};

TEST_F(CompareTest, FlagTypesMatchDebian) {
  std::mt19937_64 random(17);
  for (fi_type type : kFlagTypes) {
    std::vector<uint64_t> values = {0, ~uint64_t{0}, FI_ORDER_STRICT};
    for (int bit = 0; bit < 64; ++bit) values.push_back(uint64_t{1} << bit);
    for (int i = 0; i < 100; ++i) {
      values.push_back(random());
      values.push_back(random() & random() & random());
    }
    for (uint64_t value : values) ExpectSame(&value, type);
  }
}

TEST(FlagNamesTest, ListsAreJoinedWithCommas) {
  uint64_t caps = FI_MSG | FI_RMA | FI_TAGGED | (uint64_t{1} << 63);
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS), "FI_MSG, FI_RMA, FI_TAGGED");
  uint64_t none = 0;
  EXPECT_EQ(Ours(&none, FI_TYPE_MSG_ORDER), "");
  int mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT;
  EXPECT_EQ(Ours(&mr_mode, FI_TYPE_MR_MODE), "FI_MR_LOCAL, FI_MR_ENDPOINT");
  uint64_t mode = FI_CONTEXT | FI_CONTEXT2;
  EXPECT_EQ(Ours(&mode, FI_TYPE_MODE), "FI_CONTEXT, FI_CONTEXT2");
  uint64_t cq_flags = FI_MSG | FI_SEND;  // FI_SEND is printed first
  EXPECT_EQ(Ours(&cq_flags, FI_TYPE_CQ_EVENT_FLAGS), "FI_SEND, FI_MSG");
}

TEST(ShortBufferTest, TextStopsTwoBytesShortAndDropsATrailingComma) {
  uint64_t caps = FI_MSG | FI_RMA;
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 1), "");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 2), "");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 3), "F");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 9), "FI_MSG,");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 10), "FI_MSG");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 11), "FI_MSG, F");
  EXPECT_EQ(Ours(&caps, FI_TYPE_CAPS, 16), "FI_MSG, FI_RMA");
}

TEST_F(TextTest, VersionIsTheLibraryVersion) {
  char expected[32];
  snprintf(expected, sizeof(expected), "%d.%d.%d", FI_MAJOR_VERSION,
           FI_MINOR_VERSION, FI_REVISION_VERSION);
  int ignored = 7;
  EXPECT_EQ(Ours(&ignored, FI_TYPE_VERSION), expected);
  char buf[32];
  EXPECT_STREQ(debian_.tostr_r(buf, sizeof(buf), &ignored, FI_TYPE_VERSION),
               "1.17.0");
}

TEST_F(CompareTest, UnknownTypeMatchesDebian) {
  int value = 0;
  for (int type : {FI_TYPE_LOG_SUBSYS + 1, 1000, -1}) {
    ExpectSame(&value, type);
    EXPECT_EQ(Ours(&value, type), "Unknown type");
  }
}

TEST_F(TextTest, NullArgumentsGiveNull) {
  char buf[64];
  uint64_t caps = FI_MSG;
  EXPECT_EQ(fi_tostr_r(buf, sizeof(buf), nullptr, FI_TYPE_CAPS), nullptr);
  EXPECT_EQ(fi_tostr_r(nullptr, sizeof(buf), &caps, FI_TYPE_CAPS), nullptr);
  EXPECT_EQ(fi_tostr_r(buf, 0, &caps, FI_TYPE_CAPS), nullptr);
  EXPECT_EQ(fi_tostr(nullptr, FI_TYPE_INFO), nullptr);
  EXPECT_EQ(kOurTostrR(buf, sizeof(buf), nullptr, 1000), nullptr);
  EXPECT_EQ(debian_.tostr_r(buf, sizeof(buf), nullptr, FI_TYPE_CAPS), nullptr);
  EXPECT_EQ(debian_.tostr_r(nullptr, sizeof(buf), &caps, FI_TYPE_CAPS),
            nullptr);
  EXPECT_EQ(debian_.tostr(nullptr, FI_TYPE_INFO), nullptr);
}

// A tostr op that shows what it was given: the room and the text before it.
int ShowArgumentsTostr(const struct fid* fid, char* buf, size_t len) {
  size_t used = strnlen(buf, len);
  snprintf(buf + used, len - used, "<fid %zu, room %zu, text %zu>\n",
           fid->fclass, len, used);
  return 0;
}

fi_ops Ops(size_t size, int (*tostr)(const struct fid*, char*, size_t)) {
  fi_ops ops = {};
  ops.size = size;
  ops.tostr = tostr;
  return ops;
}

struct Fids {
  fi_ops with_tostr = Ops(sizeof(fi_ops), ShowArgumentsTostr);
  fi_ops too_small = Ops(offsetof(fi_ops, tostr), ShowArgumentsTostr);
  fi_ops null_tostr = Ops(sizeof(fi_ops), nullptr);
};

TEST_F(CompareTest, FidMatchesDebian) {
  Fids fids;
  for (fi_ops* ops : {&fids.with_tostr, &fids.too_small, &fids.null_tostr,
                      static_cast<fi_ops*>(nullptr)}) {
    fid object = {FI_CLASS_EP, nullptr, ops};
    ExpectSame(&object, FI_TYPE_FID);
  }
  fid object = {FI_CLASS_EP, nullptr, &fids.with_tostr};
  EXPECT_EQ(Ours(&object, FI_TYPE_FID, 100), "<fid 3, room 100, text 0>\n");
  object.ops = nullptr;
  char expected[64];
  snprintf(expected, sizeof(expected), "fid: %p\n",
           static_cast<void*>(&object));
  EXPECT_EQ(Ours(&object, FI_TYPE_FID), expected);
}

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

TEST_F(TextTest, FiTostrUsesAThreadLocalBuffer) {
  uint64_t caps = FI_MSG | FI_RMA;
  char* first = fi_tostr(&caps, FI_TYPE_CAPS);
  ASSERT_NE(first, nullptr);
  EXPECT_STREQ(first, "FI_MSG, FI_RMA");
  uint64_t mode = FI_CONTEXT;
  EXPECT_EQ(fi_tostr(&mode, FI_TYPE_MODE), first);
  EXPECT_STREQ(first, "FI_CONTEXT");

  char* other = nullptr;
  std::thread([&] {
    other = fi_tostr(&caps, FI_TYPE_CAPS);
    EXPECT_STREQ(other, "FI_MSG, FI_RMA");
  }).join();
  EXPECT_NE(other, first);
  EXPECT_STREQ(first, "FI_CONTEXT");
}

TEST_F(TextTest, FiTostrTruncatesLikeDebian) {
  fi_info info = {};
  info.addr_format = FI_ADDR_STR;
  std::string long_name(10000, 'n');
  info.src_addr = long_name.data();
  std::string ours = fi_tostr(&info, FI_TYPE_INFO);
  EXPECT_EQ(ours.size(), 8191u);  // an address may fill the buffer
  EXPECT_EQ(ours, debian_.tostr(&info, FI_TYPE_INFO));

  info.addr_format = FI_FORMAT_UNSPEC;
  info.caps = ~uint64_t{0};
  info.mode = ~uint64_t{0};
  std::string short_text = fi_tostr(&info, FI_TYPE_INFO);
  EXPECT_EQ(short_text, debian_.tostr(&info, FI_TYPE_INFO));
}

}  // namespace

// fi_tostr_r, fi_tostr and fi_strerror against Debian's libfabric 1.17, loaded
// with dlopen: the same bytes for every value, at every buffer length.
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
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

#include "fabric/api/text/text_testing.h"
#include "gtest/gtest.h"

namespace {

using text_testing::CompareTest;
using text_testing::Fids;
using text_testing::kOurTostrR;
using text_testing::Ours;
using text_testing::TextTest;

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

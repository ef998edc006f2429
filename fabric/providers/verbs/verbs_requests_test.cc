// Registration access, scatter-gather lists and connection private data of
// the verbs RC endpoint, checked without a device.
#include "fabric/providers/verbs/verbs_requests.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

TEST(VerbsRequestsTest, AccessFlagsGiveTheDeviceWhatEachUseNeeds) {
  EXPECT_EQ(AccessOf(FI_SEND | FI_WRITE, true), 0);
  EXPECT_EQ(AccessOf(FI_RECV, true), IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(AccessOf(FI_READ, true), IBV_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(AccessOf(FI_REMOTE_READ, true), IBV_ACCESS_REMOTE_READ);
  EXPECT_EQ(AccessOf(FI_REMOTE_WRITE, false),
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  EXPECT_EQ(AccessOf(FI_REMOTE_WRITE | FI_REMOTE_READ, true),
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

TEST(VerbsRequestsTest, ScatterGatherEntriesCarryEachRegionsKey) {
  char a[10], b[20];
  RegionDesc ra{0x11}, rb{0x22};
  iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
  void* desc[2] = {&ra, &rb};
  ibv_sge sge[2];
  ASSERT_TRUE(GatherSges(iov, desc, 2, 4, true, sge).ok());
  EXPECT_EQ(sge[0].addr, reinterpret_cast<uint64_t>(a));
  EXPECT_EQ(sge[0].length, 10u);
  EXPECT_EQ(sge[0].lkey, 0x11u);
  EXPECT_EQ(sge[1].addr, reinterpret_cast<uint64_t>(b));
  EXPECT_EQ(sge[1].length, 20u);
  EXPECT_EQ(sge[1].lkey, 0x22u);
}

TEST(VerbsRequestsTest, ScatterGatherListsRefuseWhatTheDeviceCannotTake) {
  char a[10];
  RegionDesc region{1};
  iovec iov[2] = {{a, sizeof(a)}, {a, sizeof(a)}};
  void* desc[2] = {&region, &region};
  ibv_sge sge[2];
  auto code = [](const absl::Status& status) { return ToFiErrno(status); };
  EXPECT_EQ(code(GatherSges(iov, desc, 2, 1, true, sge)), -FI_EINVAL);
  EXPECT_EQ(code(GatherSges(nullptr, desc, 1, 4, true, sge)), -FI_EINVAL);
  EXPECT_EQ(code(GatherSges(iov, nullptr, 1, 4, true, sge)), -FI_EINVAL);
  void* missing[1] = {nullptr};
  EXPECT_EQ(code(GatherSges(iov, missing, 1, 4, true, sge)), -FI_EINVAL);
  iovec null_base = {nullptr, 4};
  EXPECT_EQ(code(GatherSges(&null_base, desc, 1, 4, true, sge)), -FI_EINVAL);
  iovec huge = {a, size_t{1} << 32};
  EXPECT_EQ(code(GatherSges(&huge, desc, 1, 4, true, sge)), -FI_EINVAL);
  // Inline sends (and pieces the caller registers) need no key yet.
  ASSERT_TRUE(GatherSges(iov, nullptr, 1, 4, false, sge).ok());
  EXPECT_EQ(sge[0].lkey, 0u);
  ASSERT_TRUE(GatherSges(iov, missing, 1, 4, false, sge).ok());
  EXPECT_EQ(sge[0].lkey, 0u);
  EXPECT_TRUE(GatherSges(nullptr, nullptr, 0, 4, true, sge).ok());
}

TEST(VerbsRequestsTest, ConnectionDataRoundTripsThroughPaddedPrivateData) {
  std::string data = "hello server";
  std::vector<uint8_t> packed = PackCmData(data.data(), data.size());
  ASSERT_EQ(packed.size(), data.size() + 1);
  // The CM pads the field: the receiver sees all 56 bytes.
  std::vector<uint8_t> arrived(kConnectPrivateData, 0);
  std::copy(packed.begin(), packed.end(), arrived.begin());
  absl::StatusOr<std::vector<uint8_t>> unpacked =
      UnpackCmData(arrived.data(), arrived.size());
  ASSERT_TRUE(unpacked.ok());
  EXPECT_EQ(std::string(unpacked->begin(), unpacked->end()), data);
  std::string longest(kCmDataSize, 'x');
  packed = PackCmData(longest.data(), longest.size());
  EXPECT_EQ(packed.size(), kConnectPrivateData);
  unpacked = UnpackCmData(packed.data(), packed.size());
  ASSERT_TRUE(unpacked.ok());
  EXPECT_EQ(unpacked->size(), kCmDataSize);
}

TEST(VerbsRequestsTest, MalformedOrMissingConnectionData) {
  EXPECT_TRUE(UnpackCmData(nullptr, 0)->empty());
  uint8_t none[56] = {};
  EXPECT_TRUE(UnpackCmData(none, sizeof(none))->empty());
  uint8_t lying[4] = {200, 1, 2, 3};
  EXPECT_EQ(ToFiErrno(UnpackCmData(lying, sizeof(lying)).status()), -FI_EINVAL);
  uint8_t exact[4] = {3, 1, 2, 3};
  EXPECT_EQ(UnpackCmData(exact, sizeof(exact))->size(), 3u);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

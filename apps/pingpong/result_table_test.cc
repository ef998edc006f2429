#include "apps/pingpong/result_table.h"

#include <gtest/gtest.h>

#include "apps/pingpong/test_sizes.h"

namespace pingpong {
namespace {

TEST(ResultTableTest, HeaderIsFiPingpongs) {
  EXPECT_EQ(ResultHeader(),
            "bytes   #sent   #ack     total       time     MB/sec    "
            "usec/xfer   Mxfers/sec\n");
}

// The row Debian's fi_pingpong printed for -S 64 -I 10 in 181 us.
TEST(ResultTableTest, RowMatchesFiPingpong) {
  EXPECT_EQ(ResultRow(64, 10, 10, 181),
            "64      10      =10      1.2k        0.00s      7.07       9.05  "
            "     0.11\n");
}

TEST(ResultTableTest, LostMessagesShowAsPlus) {
  EXPECT_EQ(ResultRow(1024, 100, 98, 1000000).substr(0, 25),
            "1k      100     +2       ");
}

TEST(ResultTableTest, SizesAndCounts) {
  EXPECT_EQ(SizeText(0), "0");
  EXPECT_EQ(SizeText(1536), "1.5k");
  EXPECT_EQ(SizeText(12 * 1024), "12k");
  EXPECT_EQ(SizeText(6 << 20), "6m");
  EXPECT_EQ(CountText(999), "999");
  EXPECT_EQ(CountText(25000), "25k");
  EXPECT_EQ(CountText(3000000), "3m");
}

TEST(TestSizesTest, AllGoesUpInHalfSteps) {
  Options options;
  options.sizes = SizeChoice::kAll;
  std::vector<int> sizes = TestSizes(options, 65507);
  std::vector<int> start = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24};
  EXPECT_EQ(std::vector<int>(sizes.begin(), sizes.begin() + 10), start);
  EXPECT_EQ(sizes.back(), 49152);
  EXPECT_EQ(TestSizes(options, kMaxTransferSize).back(), 6 << 20);
}

TEST(TestSizesTest, DefaultListStopsAtTheLimit) {
  Options options;
  EXPECT_EQ(TestSizes(options, 65507), (std::vector<int>{64, 256, 1024, 4096}));
  options.sizes = SizeChoice::kOne;
  options.transfer_size = 70000;
  EXPECT_TRUE(TestSizes(options, 65507).empty());
}

}  // namespace
}  // namespace pingpong

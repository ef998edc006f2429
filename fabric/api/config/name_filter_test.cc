#include "fabric/api/config/name_filter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::ElementsAre;

TEST(NameFilterTest, EmptyListAllowsEverything) {
  EXPECT_TRUE(NameFilter().Allows("tcp"));
  EXPECT_TRUE(NameFilter::Parse("").Allows("tcp"));
  EXPECT_THAT(NameFilter::Parse("").names(), ElementsAre());
}

TEST(NameFilterTest, IncludeListAllowsOnlyItsNamesIgnoringCase) {
  NameFilter filter = NameFilter::Parse("tcp,UDP");
  EXPECT_TRUE(filter.Allows("tcp"));
  EXPECT_TRUE(filter.Allows("TCP"));
  EXPECT_TRUE(filter.Allows("udp"));
  EXPECT_FALSE(filter.Allows("verbs"));
  EXPECT_FALSE(filter.Allows("tc"));
  EXPECT_THAT(filter.names(), ElementsAre("tcp", "UDP"));
}

TEST(NameFilterTest, CaretMakesTheWholeListAnExcludeList) {
  NameFilter filter = NameFilter::Parse("^verbs,udp");
  EXPECT_FALSE(filter.Allows("verbs"));
  EXPECT_FALSE(filter.Allows("Udp"));
  EXPECT_TRUE(filter.Allows("tcp"));
  EXPECT_THAT(filter.names(), ElementsAre("verbs", "udp"));
}

TEST(NameFilterTest, NamesAreNotTrimmedAsInLibfabric) {
  NameFilter filter = NameFilter::Parse("tcp, udp");
  EXPECT_FALSE(filter.Allows("udp"));
  EXPECT_TRUE(filter.Allows(" udp"));
}

TEST(NameFilterTest, EmptyNamesAreKeptAndMatchNothing) {
  NameFilter filter = NameFilter::Parse("tcp,,udp");
  EXPECT_THAT(filter.names(), ElementsAre("tcp", "", "udp"));
  EXPECT_FALSE(filter.Allows("verbs"));
  EXPECT_TRUE(NameFilter::Parse("^").Allows("tcp"));
}

}  // namespace
}  // namespace fabric

#include "fabric/api/config/param_value.h"

#include <stdint.h>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::HasSubstr;

TEST(ParseIntParamTest, ReadsCIntegerLiterals) {
  EXPECT_EQ(*ParseIntParam("42"), 42);
  EXPECT_EQ(*ParseIntParam("-1"), -1);
  EXPECT_EQ(*ParseIntParam("0x40"), 64);
  EXPECT_EQ(*ParseIntParam("010"), 8);
  EXPECT_EQ(*ParseIntParam(" 7 "), 7);
  EXPECT_EQ(*ParseIntParam("2147483647"), 2147483647);
}

TEST(ParseIntParamTest, RejectsWhatIsNotWhollyAnInt) {
  for (const char* bad : {"", " ", "abc", "12abc", "1.5", "2147483648",
                          "-2147483649", "99999999999999999999"}) {
    absl::StatusOr<int> value = ParseIntParam(bad);
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument)
        << "'" << bad << "'";
    EXPECT_THAT(value.status().message(), HasSubstr("is not an integer"));
  }
}

TEST(ParseSizeParamTest, ReadsSizes) {
  EXPECT_EQ(*ParseSizeParam("0"), 0u);
  EXPECT_EQ(*ParseSizeParam("4096"), 4096u);
  EXPECT_EQ(*ParseSizeParam("0x10"), 16u);
  EXPECT_EQ(*ParseSizeParam("18446744073709551615"), SIZE_MAX);
}

TEST(ParseSizeParamTest, RejectsNegativeAndMalformedSizes) {
  for (const char* bad :
       {"", "-1", " -1", "1.5", "4k", "18446744073709551616"}) {
    EXPECT_FALSE(ParseSizeParam(bad).ok()) << "'" << bad << "'";
  }
}

TEST(ParseBoolParamTest, ReadsTheEightWordsInAnyCase) {
  for (const char* yes : {"1", "yes", "YES", "true", "True", "on", "ON"}) {
    EXPECT_TRUE(*ParseBoolParam(yes)) << yes;
  }
  for (const char* no : {"0", "no", "No", "false", "FALSE", "off", "Off"}) {
    EXPECT_FALSE(*ParseBoolParam(no)) << no;
  }
}

TEST(ParseBoolParamTest, RejectsOtherWords) {
  for (const char* bad : {"", "2", "y", "n", "enable", "yes please"}) {
    absl::StatusOr<bool> value = ParseBoolParam(bad);
    EXPECT_FALSE(value.ok()) << "'" << bad << "'";
    EXPECT_THAT(value.status().message(), HasSubstr("is not a boolean"));
  }
}

TEST(CheckParamValueTest, ChecksByType) {
  EXPECT_TRUE(CheckParamValue(FI_PARAM_STRING, "anything at all").ok());
  EXPECT_TRUE(CheckParamValue(FI_PARAM_INT, "-3").ok());
  EXPECT_FALSE(CheckParamValue(FI_PARAM_INT, "three").ok());
  EXPECT_TRUE(CheckParamValue(FI_PARAM_BOOL, "on").ok());
  EXPECT_FALSE(CheckParamValue(FI_PARAM_BOOL, "maybe").ok());
  EXPECT_TRUE(CheckParamValue(FI_PARAM_SIZE_T, "64").ok());
  EXPECT_FALSE(CheckParamValue(FI_PARAM_SIZE_T, "-64").ok());
  EXPECT_FALSE(CheckParamValue(static_cast<fi_param_type>(42), "1").ok());
}

}  // namespace
}  // namespace fabric

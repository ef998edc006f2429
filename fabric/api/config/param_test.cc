// fi_param_define, fi_param_get (and the fi_param_get_* inlines),
// fi_getparams and fi_freeparams.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>
#include <stddef.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Each test defines parameters under its own provider names, since
// definitions last for the life of the process.
fi_provider prov_a = TestProvider("pa");
fi_provider prov_b = TestProvider("pb");
fi_provider prov_rxm = TestProvider("ofi_rxm");
fi_provider prov_core = TestProvider("core");

class ParamTest : public ConfigTest {};

TEST_F(ParamTest, ProviderParamIsReadFromItsEnvironmentVariable) {
  ASSERT_EQ(fi_param_define(&prov_a, "iface", FI_PARAM_STRING,
                            "Specify interface name"),
            0);
  SetEnv("FI_PA_IFACE", "eth0");
  char* value = nullptr;
  ASSERT_EQ(fi_param_get_str(&prov_a, "iface", &value), 0);
  EXPECT_STREQ(value, "eth0");
}

TEST_F(ParamTest, EnvironmentVariableIsTheWholeProviderNameUpperCased) {
  ASSERT_EQ(fi_param_define(&prov_rxm, "buffer_size", FI_PARAM_SIZE_T,
                            "Bounce buffer size"),
            0);
  SetEnv("FI_OFI_RXM_BUFFER_SIZE", "16384");
  size_t value = 0;
  ASSERT_EQ(fi_param_get_size_t(&prov_rxm, "buffer_size", &value), 0);
  EXPECT_EQ(value, 16384u);
}

TEST_F(ParamTest, CoreParamsAreFiName) {
  ASSERT_EQ(
      fi_param_define(nullptr, "test_core_knob", FI_PARAM_INT, "A core knob"),
      0);
  SetEnv("FI_TEST_CORE_KNOB", "7");
  int value = 0;
  ASSERT_EQ(fi_param_get_int(nullptr, "test_core_knob", &value), 0);
  EXPECT_EQ(value, 7);
  // A provider named "core" is the core.
  value = 0;
  ASSERT_EQ(fi_param_get_int(&prov_core, "test_core_knob", &value), 0);
  EXPECT_EQ(value, 7);
}

TEST_F(ParamTest, TheCoresOwnParamsAreDefined) {
  SetEnv("FI_LOG_LEVEL", "info");
  SetEnv("FI_PROVIDER", "tcp");
  char* value = nullptr;
  ASSERT_EQ(fi_param_get_str(nullptr, "log_level", &value), 0);
  EXPECT_STREQ(value, "info");
  ASSERT_EQ(fi_param_get_str(nullptr, "provider", &value), 0);
  EXPECT_STREQ(value, "tcp");
  EXPECT_EQ(fi_param_get_str(nullptr, "log_prov", &value), -FI_ENODATA);
  EXPECT_EQ(fi_param_get_str(nullptr, "log_subsys", &value), -FI_ENODATA);
  int interval = 0;
  EXPECT_EQ(fi_param_get_int(nullptr, "log_interval", &interval), -FI_ENODATA);
}

TEST_F(ParamTest, UndefinedIsENOENTAndUnsetIsENODATA) {
  ASSERT_EQ(fi_param_define(&prov_a, "unset_one", FI_PARAM_STRING, "Unset"), 0);
  char* value = nullptr;
  EXPECT_EQ(fi_param_get_str(&prov_a, "never_defined", &value), -FI_ENOENT);
  EXPECT_EQ(fi_param_get_str(&prov_b, "unset_one", &value), -FI_ENOENT);
  EXPECT_EQ(fi_param_get_str(&prov_a, "unset_one", &value), -FI_ENODATA);
  EXPECT_EQ(value, nullptr);
}

TEST_F(ParamTest, NullArgumentsAreEINVAL) {
  int value = 0;
  EXPECT_EQ(fi_param_get(&prov_a, nullptr, &value), -FI_EINVAL);
  EXPECT_EQ(fi_param_get(&prov_a, "iface", nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_param_define(&prov_a, nullptr, FI_PARAM_INT, "help"),
            -FI_EINVAL);
  EXPECT_EQ(fi_param_define(&prov_a, "no_help", FI_PARAM_INT, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_param_define(&prov_a, "empty_help", FI_PARAM_INT, ""),
            -FI_EINVAL);
  EXPECT_EQ(fi_param_define(&prov_a, "bad_type", static_cast<fi_param_type>(9),
                            "help"),
            -FI_EINVAL);
}

TEST_F(ParamTest, RedefiningIsFineOnlyWithTheSameType) {
  ASSERT_EQ(fi_param_define(&prov_a, "twice", FI_PARAM_BOOL, "First"), 0);
  EXPECT_EQ(fi_param_define(&prov_a, "twice", FI_PARAM_BOOL, "Second"), 0);
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  EXPECT_EQ(fi_param_define(&prov_a, "twice", FI_PARAM_INT, "Third"),
            -FI_EINVAL);
  EXPECT_THAT(err.Finish(),
              HasSubstr("Failed to register twice variable: parameter "
                        "FI_PA_TWICE is already defined with another type"));
}

TEST_F(ParamTest, IntsAreCIntegers) {
  ASSERT_EQ(fi_param_define(&prov_a, "count", FI_PARAM_INT, "Count"), 0);
  int value = 0;
  SetEnv("FI_PA_COUNT", "-12");
  ASSERT_EQ(fi_param_get_int(&prov_a, "count", &value), 0);
  EXPECT_EQ(value, -12);
  SetEnv("FI_PA_COUNT", "0x20");
  ASSERT_EQ(fi_param_get_int(&prov_a, "count", &value), 0);
  EXPECT_EQ(value, 32);
}

TEST_F(ParamTest, MalformedValueIsEINVALWithAWarning) {
  ASSERT_EQ(fi_param_define(&prov_a, "depth", FI_PARAM_INT, "Depth"), 0);
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_PA_DEPTH", "12abc");
  int value = 5;
  CapturedStderr err;
  EXPECT_EQ(fi_param_get_int(&prov_a, "depth", &value), -FI_EINVAL);
  EXPECT_EQ(value, 5);
  EXPECT_THAT(err.Finish(), HasSubstr("::pa:core:ReadTyped():"));
  CapturedStderr again;
  EXPECT_EQ(fi_param_get_int(&prov_a, "depth", &value), -FI_EINVAL);
  EXPECT_THAT(again.Finish(),
              EndsWith("<warn> failed to parse int var depth=12abc (from "
                       "environment): '12abc' is not an integer (int)\n"));
}

TEST_F(ParamTest, BoolsAcceptTheUsualWordsInAnyCase) {
  ASSERT_EQ(fi_param_define(&prov_a, "flag", FI_PARAM_BOOL, "Flag"), 0);
  const std::map<std::string, int> words = {
      {"1", 1}, {"yes", 1}, {"TRUE", 1},  {"On", 1},
      {"0", 0}, {"NO", 0},  {"false", 0}, {"off", 0}};
  for (const auto& [word, expected] : words) {
    SetEnv("FI_PA_FLAG", word);
    int value = -1;
    ASSERT_EQ(fi_param_get_bool(&prov_a, "flag", &value), 0) << word;
    EXPECT_EQ(value, expected) << word;
  }
  SetEnv("FI_PA_FLAG", "maybe");
  int value = -1;
  EXPECT_EQ(fi_param_get_bool(&prov_a, "flag", &value), -FI_EINVAL);
  EXPECT_EQ(value, -1);
}

TEST_F(ParamTest, SizesAreNotNegative) {
  ASSERT_EQ(fi_param_define(&prov_a, "bytes", FI_PARAM_SIZE_T, "Bytes"), 0);
  size_t value = 0;
  SetEnv("FI_PA_BYTES", "1048576");
  ASSERT_EQ(fi_param_get_size_t(&prov_a, "bytes", &value), 0);
  EXPECT_EQ(value, 1048576u);
  SetEnv("FI_PA_BYTES", "-1");
  EXPECT_EQ(fi_param_get_size_t(&prov_a, "bytes", &value), -FI_EINVAL);
}

TEST_F(ParamTest, ValueComesFromTheFileUnlessTheEnvironmentSetsIt) {
  ASSERT_EQ(fi_param_define(&prov_b, "iface", FI_PARAM_STRING, "Interface"), 0);
  ASSERT_EQ(fi_param_define(&prov_b, "spin", FI_PARAM_INT, "Spin"), 0);
  SetEnv("FI_CONFIG",
         WriteTestFile("param.conf",
                       "provider {\n"
                       "  name: \"pb\"\n"
                       "  param { name: \"iface\" value: \"lo\" }\n"
                       "  param { name: \"spin\" value: \"x\" }\n"
                       "}\n"));
  char* iface = nullptr;
  ASSERT_EQ(fi_param_get_str(&prov_b, "iface", &iface), 0);
  EXPECT_STREQ(iface, "lo");
  SetEnv("FI_PB_IFACE", "eth1");
  ASSERT_EQ(fi_param_get_str(&prov_b, "iface", &iface), 0);
  EXPECT_STREQ(iface, "eth1");

  SetEnv("FI_LOG_LEVEL", "warn");
  int spin = 0;
  CapturedStderr err;
  EXPECT_EQ(fi_param_get_int(&prov_b, "spin", &spin), -FI_EINVAL);
  EXPECT_THAT(err.Finish(),
              HasSubstr("failed to parse int var spin=x (from " +
                        std::string(getenv("FI_CONFIG")) + ":4)"));
}

TEST_F(ParamTest, HelpIsFormattedAndPrefixedWithTheProvider) {
  ASSERT_EQ(fi_param_define(&prov_a, "formatted", FI_PARAM_INT,
                            "Up to %d things (default: %s)", 8, "4"),
            0);
  struct fi_param* params = nullptr;
  int count = 0;
  ASSERT_EQ(fi_getparams(&params, &count), 0);
  std::string help;
  for (int i = 0; i < count; ++i) {
    if (std::string(params[i].name) == "FI_PA_FORMATTED") {
      help = params[i].help_string;
      EXPECT_EQ(params[i].type, FI_PARAM_INT);
    }
  }
  fi_freeparams(params);
  EXPECT_EQ(help, "pa: Up to 8 things (default: 4) [default]");
}

// fi_getparams as name -> {value or "(null)", help}.
std::map<std::string, std::pair<std::string, std::string>> Params() {
  struct fi_param* params = nullptr;
  int count = 0;
  EXPECT_EQ(fi_getparams(&params, &count), 0);
  std::map<std::string, std::pair<std::string, std::string>> by_name;
  for (int i = 0; i < count; ++i) {
    by_name[params[i].name] = {
        params[i].value == nullptr ? "(null)" : params[i].value,
        params[i].help_string};
  }
  EXPECT_EQ(params[count].name, nullptr);
  EXPECT_EQ(params[count].help_string, nullptr);
  EXPECT_EQ(params[count].value, nullptr);
  fi_freeparams(params);
  return by_name;
}

TEST_F(ParamTest, GetParamsListsEachValueAndWhereItComesFrom) {
  ASSERT_EQ(fi_param_define(&prov_b, "listed", FI_PARAM_STRING, "Listed"), 0);
  std::string path = WriteTestFile("getparams.conf",
                                   "logging {\n"
                                   "  level: \"info\"\n"
                                   "  subsystems: \"core\"\n"
                                   "}\n"
                                   "provider {\n"
                                   "  name: \"pb\"\n"
                                   "  param { name: \"listed\" value: \"v\" }\n"
                                   "}\n");
  SetEnv("FI_CONFIG", path);
  SetEnv("FI_LOG_SUBSYS", "av");
  SetEnv("FI_PROVIDER", "^verbs");

  auto params = Params();
  EXPECT_EQ(params["FI_LOG_LEVEL"],
            std::make_pair(std::string("info"),
                           absl::StrCat("Specify logging level: warn, trace, "
                                        "info, debug (default: warn) [value "
                                        "from ",
                                        path, ":2]")));
  EXPECT_EQ(params["FI_LOG_SUBSYS"],
            std::make_pair(std::string("av"),
                           absl::StrCat("Specify specific subsystem to log "
                                        "(default: all) [value from "
                                        "environment, overriding ",
                                        path, ":3]")));
  EXPECT_EQ(params["FI_PROVIDER"],
            std::make_pair(std::string("^verbs"),
                           std::string("Only use specified provider (default: "
                                       "all available) [value from "
                                       "environment]")));
  EXPECT_EQ(params["FI_LOG_PROV"],
            std::make_pair(std::string("(null)"),
                           std::string("Specify specific provider to log "
                                       "(default: all) [default]")));
  EXPECT_EQ(
      params["FI_PB_LISTED"],
      std::make_pair(std::string("v"),
                     absl::StrCat("pb: Listed [value from ", path, ":7]")));
  EXPECT_EQ(params["FI_CONFIG"].first, path);
  EXPECT_EQ(params["FI_LOG_INTERVAL"].second,
            "Delay in ms between rate limited log messages (default 2000) "
            "[default]");
}

TEST_F(ParamTest, GetParamsKeepsTheCoresOrderFirst) {
  struct fi_param* params = nullptr;
  int count = 0;
  ASSERT_EQ(fi_getparams(&params, &count), 0);
  ASSERT_GE(count, 6);
  std::vector<std::string> first;
  for (int i = 0; i < 6; ++i) first.push_back(params[i].name);
  fi_freeparams(params);
  EXPECT_THAT(first, ::testing::ElementsAre("FI_LOG_INTERVAL", "FI_LOG_LEVEL",
                                            "FI_LOG_PROV", "FI_LOG_SUBSYS",
                                            "FI_PROVIDER", "FI_CONFIG"));
}

TEST_F(ParamTest, GetParamsChecksItsArguments) {
  struct fi_param* params = nullptr;
  int count = 0;
  EXPECT_EQ(fi_getparams(nullptr, &count), -FI_EINVAL);
  EXPECT_EQ(fi_getparams(&params, nullptr), -FI_EINVAL);
  fi_freeparams(nullptr);
}

}  // namespace
}  // namespace fabric

// What the core asks of the configuration (settings.h): the checked load,
// FI_PROVIDER, priorities and attribute defaults, with the environment over
// the file over the built-in defaults.
#include "fabric/api/config/settings.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/test_util.h"
#include "fabric/api/core/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;

fi_provider tcp = TestProvider("tcp");
fi_provider udp = TestProvider("udp");
int catalog_calls = 0;

// The providers of these tests: "tcp" (with "iface" and "port") and "udp".
std::vector<std::string> TestCatalog() {
  ++catalog_calls;
  fi_param_define(&tcp, "iface", FI_PARAM_STRING, "Specify interface name");
  fi_param_define(&tcp, "port", FI_PARAM_INT, "Port");
  return {"tcp", "udp"};
}

class SettingsTest : public ConfigTest {
 protected:
  void SetUp() override {
    ConfigTest::SetUp();
    SetProviderCatalog(&TestCatalog);
    catalog_calls = 0;
  }
  void TearDown() override {
    SetProviderCatalog(nullptr);
    ConfigTest::TearDown();
  }

  void UseConfig(const std::string& name, const std::string& text) {
    path_ = WriteTestFile(name, text);
    SetEnv("FI_CONFIG", path_);
  }

  std::string path_;
};

TEST_F(SettingsTest, NoFileIsAValidEmptyConfiguration) {
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  EXPECT_TRUE(ProviderEnabled("tcp"));
  EXPECT_EQ(ProviderPriority("tcp", 5), 5);
  absl::StatusOr<AttrOverrides> attrs = ProviderAttrOverrides("tcp");
  ASSERT_TRUE(attrs.ok());
  EXPECT_FALSE(attrs->tx_size.has_value());
  EXPECT_FALSE(attrs->threading.has_value());
}

TEST_F(SettingsTest, AbsentDefaultFileIsAnEmptyConfiguration) {
  UnsetEnv("FI_CONFIG");
  EXPECT_TRUE(EnsureConfigLoaded().ok());
}

TEST_F(SettingsTest, DefaultFileIsReadWhenFiConfigIsUnset) {
  std::string path =
      WriteTestFile("default.conf", "enabled_providers: \"udp\"\n");
  unsetenv("FI_CONFIG");
  ResetConfigForTesting(path);
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  EXPECT_FALSE(ProviderEnabled("tcp"));
  EXPECT_TRUE(ProviderEnabled("udp"));
}

TEST_F(SettingsTest, EmptyFiConfigReadsNoFileAtAll) {
  std::string path = WriteTestFile("ignored.conf", "bogus: 1\n");
  setenv("FI_CONFIG", "", 1);
  ResetConfigForTesting(path);
  EXPECT_TRUE(EnsureConfigLoaded().ok());
}

TEST_F(SettingsTest, MissingNamedFileIsAnError) {
  std::string path = WriteTestFile("named.conf", "") + ".missing";
  SetEnv("FI_CONFIG", path);
  absl::Status status = EnsureConfigLoaded();
  EXPECT_EQ(ToFiErrno(status), -FI_EINVAL);
  EXPECT_THAT(status.message(), HasSubstr(path + ": cannot open config file"));
}

// An FI_CONFIG that names a device is refused at once, with a warning:
// it used to be read forever (/dev/zero: fi_getinfo never returned while
// memory grew past 6 GB).
TEST_F(SettingsTest, ANamedDeviceIsRefusedUnread) {
  SetEnv("FI_CONFIG", "/dev/zero");
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  absl::Status status = EnsureConfigLoaded();
  EXPECT_EQ(ToFiErrno(status), -FI_EINVAL);
  EXPECT_THAT(status.message(), HasSubstr("/dev/zero: not a regular file"));
  EXPECT_THAT(err.Finish(), HasSubstr("<warn> /dev/zero: not a regular file"));
}

TEST_F(SettingsTest, MalformedFileFailsWithWhereAndIsLoggedOnce) {
  UseConfig("malformed.conf",
            "enabled_providers: \"tcp\"\n"
            "logging { level: \"warn\" colour: 2 }\n");
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  absl::Status status = EnsureConfigLoaded();
  EXPECT_EQ(ToFiErrno(status), -FI_EINVAL);
  std::string where = absl::StrCat(path_, ":2:31: ");
  EXPECT_THAT(status.message(),
              HasSubstr(where + "Message type \"fabric.config.Logging\" has "
                                "no field named \"colour\"."));
  // Sticky: the same result, logged once.
  EXPECT_EQ(EnsureConfigLoaded(), status);
  std::string logged = err.Finish();
  EXPECT_THAT(logged, HasSubstr("::core:core:EnsureConfigLoaded():"));
  EXPECT_THAT(logged, HasSubstr("<warn> " + where));
  EXPECT_EQ(logged.find(where), logged.rfind(where));
  // A file with errors sets nothing.
  EXPECT_TRUE(ProviderEnabled("udp"));
}

TEST_F(SettingsTest, UnknownProviderIsAnError) {
  UseConfig("unknown-provider.conf",
            "provider { name: \"tpc\" priority: 3 }\n");
  absl::Status status = EnsureConfigLoaded();
  EXPECT_EQ(ToFiErrno(status), -FI_EINVAL);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(path_,
                                     ":1:12: unknown provider 'tpc' "
                                     "(providers: tcp, udp)")));
}

TEST_F(SettingsTest, UnknownProviderInAListIsAnError) {
  UseConfig("unknown-in-list.conf",
            "enabled_providers: \"tcp\"\n"
            "logging { providers: \"^verbs\" }\n");
  absl::Status status = EnsureConfigLoaded();
  EXPECT_THAT(
      status.message(),
      AllOf(HasSubstr(absl::StrCat(path_, ":2:11: unknown provider 'verbs'")),
            Not(HasSubstr("'tcp'"))));
}

TEST_F(SettingsTest, UnknownParamIsAnErrorListingTheKnownOnes) {
  UseConfig("unknown-param.conf",
            "provider {\n"
            "  name: \"TCP\"\n"
            "  param { name: \"ifac\" value: \"lo\" }\n"
            "}\n");
  absl::Status status = EnsureConfigLoaded();
  EXPECT_EQ(ToFiErrno(status), -FI_EINVAL);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(
                  path_,
                  ":3:11: provider 'tcp' has no parameter 'ifac' (its "
                  "parameters: iface, port, priority, attr_tx_size")));
}

TEST_F(SettingsTest, MalformedParamValueIsAnError) {
  UseConfig("bad-value.conf",
            "provider {\n"
            "  name: \"tcp\"\n"
            "  param { name: \"port\" value: \"http\" }\n"
            "}\n");
  absl::Status status = EnsureConfigLoaded();
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(path_,
                                     ":3:24: FI_TCP_PORT: 'http' is "
                                     "not an integer (int)")));
}

TEST_F(SettingsTest, ValidFileWithCatalogLoads) {
  UseConfig("valid.conf",
            "enabled_providers: \"^udp\"\n"
            "provider {\n"
            "  name: \"tcp\"\n"
            "  priority: 9\n"
            "  param { name: \"port\" value: \"0x50\" }\n"
            "}\n");
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  EXPECT_EQ(catalog_calls, 1);
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  EXPECT_EQ(catalog_calls, 1);
  int port = 0;
  ASSERT_EQ(fi_param_get_int(&tcp, "port", &port), 0);
  EXPECT_EQ(port, 80);
}

TEST_F(SettingsTest, WithoutACatalogProviderNamesAreNotChecked) {
  SetProviderCatalog(nullptr);
  UseConfig("no-catalog.conf", "provider { name: \"tpc\" }\n");
  EXPECT_TRUE(EnsureConfigLoaded().ok());
}

TEST_F(SettingsTest, AnEmptyProviderListIsUnsetAndSaysSo) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_PROVIDER", "");
  CapturedStderr err;
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  EXPECT_TRUE(ProviderEnabled("tcp"));
  EXPECT_THAT(err.Finish(), HasSubstr("<warn> FI_PROVIDER is set but empty: "
                                      "treated as unset (every provider)"));
}

TEST_F(SettingsTest, UnknownNamesInEnvironmentAreOnlyWarnings) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_PROVIDER", "tcp,tpc");
  SetEnv("FI_LOG_PROV", "^ud");
  CapturedStderr err;
  EXPECT_TRUE(EnsureConfigLoaded().ok());
  std::string logged = err.Finish();
  EXPECT_THAT(logged, HasSubstr("<warn> provider tpc is unknown, misspelled "
                                "or DL provider?\n"));
  EXPECT_THAT(logged, HasSubstr("<warn> provider ud is unknown, misspelled "
                                "or DL provider?\n"));
}

TEST_F(SettingsTest, ProviderEnabledFollowsFiProviderGrammar) {
  SetEnv("FI_PROVIDER", "TCP,verbs");
  EXPECT_TRUE(ProviderEnabled("tcp"));
  EXPECT_FALSE(ProviderEnabled("udp"));
  SetEnv("FI_PROVIDER", "^tcp");
  EXPECT_FALSE(ProviderEnabled("tcp"));
  EXPECT_TRUE(ProviderEnabled("udp"));
  SetEnv("FI_PROVIDER", "");
  EXPECT_TRUE(ProviderEnabled("tcp"));
}

TEST_F(SettingsTest, EnvironmentProviderListReplacesTheFiles) {
  UseConfig("enabled.conf", "enabled_providers: \"udp\"\n");
  EXPECT_FALSE(ProviderEnabled("tcp"));
  EXPECT_TRUE(ProviderEnabled("udp"));
  SetEnv("FI_PROVIDER", "^udp");
  EXPECT_TRUE(ProviderEnabled("tcp"));
  EXPECT_FALSE(ProviderEnabled("udp"));
}

TEST_F(SettingsTest, PriorityFromFileThenEnvironment) {
  UseConfig("priority.conf", "provider { name: \"udp\" priority: 40 }\n");
  EXPECT_EQ(ProviderPriority("udp", 1), 40);
  EXPECT_EQ(ProviderPriority("tcp", 2), 2);
  SetEnv("FI_UDP_PRIORITY", "-3");
  EXPECT_EQ(ProviderPriority("udp", 1), -3);
}

TEST_F(SettingsTest, MalformedPriorityKeepsTheDefaultWithAWarning) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_UDP_PRIORITY", "high");
  CapturedStderr err;
  EXPECT_EQ(ProviderPriority("udp", 7), 7);
  EXPECT_THAT(err.Finish(),
              HasSubstr("<warn> FI_UDP_PRIORITY=high (from environment): "
                        "'high' is not an integer (int); using priority 7\n"));
}

TEST_F(SettingsTest, AttrOverridesFromFileThenEnvironment) {
  UseConfig("attrs.conf",
            "provider {\n"
            "  name: \"tcp\"\n"
            "  attrs {\n"
            "    tx_size: 256 rx_size: 128 max_msg_size: 4096 inject_size: 32\n"
            "    threading: \"FI_THREAD_DOMAIN\"\n"
            "    control_progress: \"FI_PROGRESS_AUTO\"\n"
            "    data_progress: \"fi_progress_manual\"\n"
            "  }\n"
            "}\n");
  ASSERT_TRUE(EnsureConfigLoaded().ok());
  absl::StatusOr<AttrOverrides> attrs = ProviderAttrOverrides("tcp");
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  EXPECT_THAT(attrs->tx_size, Optional(256u));
  EXPECT_THAT(attrs->rx_size, Optional(128u));
  EXPECT_THAT(attrs->max_msg_size, Optional(4096u));
  EXPECT_THAT(attrs->inject_size, Optional(32u));
  EXPECT_THAT(attrs->threading, Optional(FI_THREAD_DOMAIN));
  EXPECT_THAT(attrs->control_progress, Optional(FI_PROGRESS_AUTO));
  EXPECT_THAT(attrs->data_progress, Optional(FI_PROGRESS_MANUAL));

  SetEnv("FI_TCP_ATTR_TX_SIZE", "0x1000");
  SetEnv("FI_TCP_ATTR_THREADING", "FI_THREAD_SAFE");
  attrs = ProviderAttrOverrides("tcp");
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  EXPECT_THAT(attrs->tx_size, Optional(4096u));
  EXPECT_THAT(attrs->threading, Optional(FI_THREAD_SAFE));
  EXPECT_THAT(attrs->rx_size, Optional(128u));

  attrs = ProviderAttrOverrides("udp");
  ASSERT_TRUE(attrs.ok());
  EXPECT_FALSE(attrs->tx_size.has_value());
}

TEST_F(SettingsTest, MalformedAttrInEnvironmentIsEINVAL) {
  SetEnv("FI_TCP_ATTR_DATA_PROGRESS", "sometimes");
  absl::StatusOr<AttrOverrides> attrs = ProviderAttrOverrides("tcp");
  EXPECT_EQ(ToFiErrno(attrs.status()), -FI_EINVAL);
  EXPECT_EQ(attrs.status().message(),
            "FI_TCP_ATTR_DATA_PROGRESS=sometimes (from environment): not "
            "FI_PROGRESS_AUTO or FI_PROGRESS_MANUAL");
  SetEnv("FI_TCP_ATTR_DATA_PROGRESS", "FI_PROGRESS_AUTO");
  SetEnv("FI_TCP_ATTR_RX_SIZE", "-1");
  attrs = ProviderAttrOverrides("tcp");
  EXPECT_THAT(attrs.status().message(),
              HasSubstr("FI_TCP_ATTR_RX_SIZE=-1 (from environment): '-1' is "
                        "not a size (size_t)"));
}

TEST_F(SettingsTest, GetParamsListsEveryProvidersSettings) {
  UseConfig("listed.conf", "provider { name: \"udp\" priority: 12 }\n");
  SetEnv("FI_TCP_ATTR_INJECT_SIZE", "16");
  struct fi_param* params = nullptr;
  int count = 0;
  ASSERT_EQ(fi_getparams(&params, &count), 0);
  std::map<std::string, const fi_param*> by_name;
  for (int i = 0; i < count; ++i) by_name[params[i].name] = &params[i];

  ASSERT_TRUE(by_name.count("FI_UDP_PRIORITY"));
  EXPECT_STREQ(by_name["FI_UDP_PRIORITY"]->value, "12");
  EXPECT_EQ(by_name["FI_UDP_PRIORITY"]->type, FI_PARAM_INT);
  EXPECT_EQ(std::string(by_name["FI_UDP_PRIORITY"]->help_string),
            absl::StrCat("udp: Order among providers in fi_getinfo's results, "
                         "higher first (default: built in) [value from ",
                         path_, ":1]"));
  ASSERT_TRUE(by_name.count("FI_TCP_ATTR_INJECT_SIZE"));
  EXPECT_STREQ(by_name["FI_TCP_ATTR_INJECT_SIZE"]->value, "16");
  EXPECT_EQ(by_name["FI_TCP_ATTR_INJECT_SIZE"]->type, FI_PARAM_SIZE_T);
  EXPECT_THAT(by_name["FI_TCP_ATTR_INJECT_SIZE"]->help_string,
              ::testing::EndsWith(" [value from environment]"));
  ASSERT_TRUE(by_name.count("FI_TCP_IFACE"));
  EXPECT_EQ(by_name["FI_TCP_IFACE"]->value, nullptr);
  EXPECT_STREQ(by_name["FI_TCP_IFACE"]->help_string,
               "tcp: Specify interface name [default]");
  for (const char* name :
       {"FI_TCP_ATTR_TX_SIZE", "FI_TCP_ATTR_RX_SIZE",
        "FI_TCP_ATTR_MAX_MSG_SIZE", "FI_TCP_ATTR_THREADING",
        "FI_TCP_ATTR_CONTROL_PROGRESS", "FI_UDP_ATTR_DATA_PROGRESS"}) {
    EXPECT_TRUE(by_name.count(name)) << name;
  }
  fi_freeparams(params);
}

}  // namespace
}  // namespace fabric

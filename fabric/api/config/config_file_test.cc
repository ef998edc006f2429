#include "fabric/api/config/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {

bool operator==(const FileSetting& a, const FileSetting& b) {
  return a.value == b.value && a.where == b.where;
}

void PrintTo(const FileSetting& setting, std::ostream* out) {
  *out << "{\"" << setting.value << "\" at " << setting.where << "}";
}

namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kPath[] = "/etc/fabric/test.conf";

// The only error of parsing `text`.
std::string OnlyError(const std::string& text) {
  ConfigFile file = ParseConfigText(text, kPath);
  EXPECT_THAT(file.settings, IsEmpty()) << "a file with errors sets nothing";
  EXPECT_THAT(file.provider_names, IsEmpty());
  EXPECT_THAT(file.provider_params, IsEmpty());
  if (file.errors.size() != 1) {
    ADD_FAILURE() << "expected one error, got " << file.errors.size();
    return "";
  }
  return file.errors[0];
}

TEST(ParseConfigTextTest, EmptyTextSetsNothing) {
  ConfigFile file = ParseConfigText("# nothing\n", kPath);
  EXPECT_THAT(file.errors, IsEmpty());
  EXPECT_THAT(file.settings, IsEmpty());
  EXPECT_EQ(file.path, kPath);
}

TEST(ParseConfigTextTest, EachSettingIsKeyedByItsEnvironmentVariable) {
  ConfigFile file = ParseConfigText(
      "enabled_providers: \"^verbs\"\n"
      "logging {\n"
      "  level: \"info\"\n"
      "  providers: \"tcp\"\n"
      "  subsystems: \"core,ep_data\"\n"
      "  interval_ms: 50\n"
      "}\n"
      "provider {\n"
      "  name: \"tcp\"\n"
      "  priority: 30\n"
      "  param { name: \"iface\" value: \"lo\" }\n"
      "  attrs {\n"
      "    tx_size: 1024 rx_size: 512 max_msg_size: 65536 inject_size: 64\n"
      "    threading: \"FI_THREAD_DOMAIN\"\n"
      "    control_progress: \"fi_progress_auto\"\n"
      "    data_progress: \"FI_PROGRESS_MANUAL\"\n"
      "  }\n"
      "}\n",
      kPath);
  ASSERT_THAT(file.errors, IsEmpty());
  auto at = [](int line) { return absl::StrCat(kPath, ":", line); };
  EXPECT_THAT(
      file.settings,
      UnorderedElementsAre(
          Pair("FI_PROVIDER", FileSetting{"^verbs", at(1)}),
          Pair("FI_LOG_LEVEL", FileSetting{"info", at(3)}),
          Pair("FI_LOG_PROV", FileSetting{"tcp", at(4)}),
          Pair("FI_LOG_SUBSYS", FileSetting{"core,ep_data", at(5)}),
          Pair("FI_LOG_INTERVAL", FileSetting{"50", at(6)}),
          Pair("FI_TCP_PRIORITY", FileSetting{"30", at(10)}),
          Pair("FI_TCP_IFACE", FileSetting{"lo", at(11)}),
          Pair("FI_TCP_ATTR_TX_SIZE", FileSetting{"1024", at(13)}),
          Pair("FI_TCP_ATTR_RX_SIZE", FileSetting{"512", at(13)}),
          Pair("FI_TCP_ATTR_MAX_MSG_SIZE", FileSetting{"65536", at(13)}),
          Pair("FI_TCP_ATTR_INJECT_SIZE", FileSetting{"64", at(13)}),
          Pair("FI_TCP_ATTR_THREADING",
               FileSetting{"FI_THREAD_DOMAIN", at(14)}),
          Pair("FI_TCP_ATTR_CONTROL_PROGRESS",
               FileSetting{"fi_progress_auto", at(15)}),
          Pair("FI_TCP_ATTR_DATA_PROGRESS",
               FileSetting{"FI_PROGRESS_MANUAL", at(16)})));
}

TEST(ParseConfigTextTest, ListsTheProviderNamesAndParamsItUses) {
  ConfigFile file = ParseConfigText(
      "enabled_providers: \"tcp,udp\"\n"
      "logging { providers: \"^verbs\" }\n"
      "provider {\n"
      "  name: \"TCP\"\n"
      "  param { name: \"iface\" value: \"lo\" }\n"
      "}\n",
      kPath);
  ASSERT_THAT(file.errors, IsEmpty());
  EXPECT_THAT(file.provider_names,
              ElementsAre(Field(&ProviderNameUse::name, "tcp"),
                          Field(&ProviderNameUse::name, "udp"),
                          Field(&ProviderNameUse::name, "verbs"),
                          Field(&ProviderNameUse::name, "TCP")));
  EXPECT_EQ(file.provider_names[3].where, absl::StrCat(kPath, ":4:3"));
  ASSERT_EQ(file.provider_params.size(), 1u);
  const ProviderParamUse& iface = file.provider_params[0];
  EXPECT_EQ(iface.provider, "TCP");
  EXPECT_EQ(iface.param, "iface");
  EXPECT_EQ(iface.env_name, "FI_TCP_IFACE");
  EXPECT_EQ(iface.name_where, absl::StrCat(kPath, ":5:11"));
  EXPECT_EQ(iface.value_where, absl::StrCat(kPath, ":5:25"));
}

TEST(ParseConfigTextTest, SyntaxErrorSaysFileLineAndColumn) {
  EXPECT_EQ(OnlyError("enabled_providers: \"tcp\"\nlogging { level: }\n"),
            absl::StrCat(kPath, ":2:18: Expected string, got: }"));
  EXPECT_EQ(OnlyError("logging {"),
            absl::StrCat(kPath, ":1:10: Expected identifier, got: "));
}

TEST(ParseConfigTextTest, UnknownFieldIsAnError) {
  EXPECT_EQ(OnlyError("bogus: 1\n"),
            absl::StrCat(kPath,
                         ":1:6: Message type \"fabric.config.Config\" has no "
                         "field named \"bogus\"."));
  EXPECT_EQ(OnlyError("provider {\n  name: \"tcp\"\n  colour: 3\n}\n"),
            absl::StrCat(kPath,
                         ":3:9: Message type \"fabric.config.Provider\" has "
                         "no field named \"colour\"."));
}

TEST(ParseConfigTextTest, WrongValueTypesAreErrors) {
  EXPECT_EQ(OnlyError("provider { name: \"tcp\" attrs { tx_size: -1 } }\n"),
            absl::StrCat(kPath, ":1:41: Expected integer, got: -"));
  EXPECT_EQ(OnlyError("provider { name: \"tcp\" priority: \"high\" }\n"),
            absl::StrCat(kPath, ":1:34: Expected integer, got: \"high\""));
  EXPECT_THAT(OnlyError("logging { level: \"warn\" level: \"info\" }\n"),
              HasSubstr(":1:30: Non-repeated field \"level\" is specified "
                        "multiple times."));
}

TEST(ParseConfigTextTest, BadEnumStringsAreErrors) {
  EXPECT_EQ(OnlyError("provider { name: \"tcp\"\n"
                      "  attrs {\n"
                      "    threading: \"FI_THREAD_WHATEVER\"\n"
                      "  }\n"
                      "}\n"),
            absl::StrCat(kPath,
                         ":3:5: attrs.threading: unknown threading model "
                         "'FI_THREAD_WHATEVER' (expected FI_THREAD_SAFE, "
                         "FI_THREAD_FID, FI_THREAD_DOMAIN, "
                         "FI_THREAD_COMPLETION or FI_THREAD_ENDPOINT)"));
  EXPECT_THAT(OnlyError("provider { name: \"tcp\" attrs { data_progress: "
                        "\"FI_PROGRESS_UNSPEC\" } }"),
              HasSubstr(":1:32: attrs.data_progress: unknown progress model "
                        "'FI_PROGRESS_UNSPEC'"));
  EXPECT_THAT(OnlyError("provider { name: \"tcp\" attrs { control_progress: "
                        "\"auto\" } }"),
              HasSubstr(":1:32: attrs.control_progress: unknown progress"));
  EXPECT_EQ(OnlyError("logging {\n  level: \"loud\"\n}\n"),
            absl::StrCat(kPath,
                         ":2:3: logging.level: unknown level 'loud' (expected "
                         "warn, trace, info or debug)"));
}

TEST(ParseConfigTextTest, MrCacheSettingsAreTheCoresOwn) {
  ConfigFile file = ParseConfigText(
      "mr_cache {\n"
      "  max_size: 1048576 max_count: 8\n"
      "  monitor: \"disabled\"\n"
      "}\n",
      kPath);
  ASSERT_THAT(file.errors, IsEmpty());
  auto at = [](int line) { return absl::StrCat(kPath, ":", line); };
  EXPECT_THAT(file.settings,
              UnorderedElementsAre(
                  Pair("FI_MR_CACHE_MAX_SIZE", FileSetting{"1048576", at(2)}),
                  Pair("FI_MR_CACHE_MAX_COUNT", FileSetting{"8", at(2)}),
                  Pair("FI_MR_CACHE_MONITOR", FileSetting{"disabled", at(3)})));
  EXPECT_THAT(OnlyError("mr_cache { monitor: \"memhooks\" }"),
              HasSubstr(":1:12: mr_cache.monitor: unknown monitor 'memhooks' "
                        "(expected userfaultfd or disabled)"));
}

TEST(ParseConfigTextTest, BadLoggingValuesAreErrors) {
  EXPECT_THAT(OnlyError("logging { subsystems: \"core,disk\" }"),
              HasSubstr(":1:11: logging.subsystems: unknown subsystem 'disk'"));
  EXPECT_THAT(OnlyError("logging { interval_ms: -5 }"),
              HasSubstr(":1:11: logging.interval_ms: negative"));
  EXPECT_THAT(OnlyError("logging { providers: \"tcp,,udp\" }"),
              HasSubstr(":1:11: providers: '' in \"tcp,,udp\" is not a "
                        "provider name"));
}

TEST(ParseConfigTextTest, ProviderListsHoldOnlyNames) {
  EXPECT_THAT(OnlyError("enabled_providers: \"tcp;ofi_rxm\""),
              HasSubstr(":1:1: enabled_providers: 'tcp;ofi_rxm' in "
                        "\"tcp;ofi_rxm\" is not a provider name"));
}

TEST(ParseConfigTextTest, ProviderNeedsAUsableUniqueName) {
  EXPECT_EQ(OnlyError("provider { priority: 3 }"),
            absl::StrCat(kPath, ":1:1: provider: name is required"));
  EXPECT_THAT(OnlyError("provider { name: \"my tcp\" }"),
              HasSubstr(":1:12: provider: 'my tcp' is not a provider name"));
  EXPECT_THAT(OnlyError("provider { name: \"core\" }"),
              HasSubstr("'core' is not a provider name"));
  EXPECT_EQ(OnlyError("provider { name: \"tcp\" }\n"
                      "provider { name: \"TCP\" }\n"),
            absl::StrCat(kPath,
                         ":2:12: provider 'TCP' is configured twice "
                         "(first at ",
                         kPath, ":1:12)"));
}

TEST(ParseConfigTextTest, ParamsNeedUsableUniqueNames) {
  EXPECT_THAT(OnlyError("provider { name: \"tcp\" param { value: \"x\" } }"),
              HasSubstr(":1:24: provider 'tcp': param: name is required"));
  EXPECT_THAT(
      OnlyError("provider { name: \"tcp\" param { name: \"priority\" } }"),
      HasSubstr(":1:32: provider 'tcp': 'priority' is set with the "
                "provider's priority and attrs fields, not as a param"));
  EXPECT_THAT(
      OnlyError("provider { name: \"tcp\" param { name: \"attr_tx_size\" } }"),
      HasSubstr("'attr_tx_size' is set with the provider's priority"));
  EXPECT_EQ(OnlyError("provider {\n"
                      "  name: \"tcp\"\n"
                      "  param { name: \"iface\" value: \"lo\" }\n"
                      "  param { name: \"iface\" value: \"eth0\" }\n"
                      "}\n"),
            absl::StrCat(kPath,
                         ":4:25: sets FI_TCP_IFACE a second time "
                         "(first at ",
                         kPath, ":3)"));
}

TEST(ParseConfigTextTest, ReportsEveryError) {
  ConfigFile file = ParseConfigText(
      "logging { level: \"loud\" subsystems: \"disk\" }\n", kPath);
  EXPECT_EQ(file.errors.size(), 2u);
}

TEST(ReadConfigFileTest, ReadsAFile) {
  std::string path = WriteTestFile("read.conf", "enabled_providers: \"udp\"\n");
  ConfigFile file = ReadConfigFile(path, true);
  EXPECT_THAT(file.errors, IsEmpty());
  EXPECT_EQ(file.path, path);
  EXPECT_EQ(file.settings.at("FI_PROVIDER").where, path + ":1");
}

TEST(ReadConfigFileTest, MissingFileIsAnErrorOnlyWhenItMustExist) {
  std::string path = WriteTestFile("exists.conf", "") + ".missing";
  ConfigFile optional = ReadConfigFile(path, false);
  EXPECT_THAT(optional.errors, IsEmpty());
  EXPECT_EQ(optional.path, "");

  ConfigFile required = ReadConfigFile(path, true);
  EXPECT_THAT(required.errors,
              ElementsAre(path + ": cannot open config file: No such file or "
                                 "directory"));
}

TEST(ReadConfigFileTest, DirectoryIsAnError) {
  std::string dir = WriteTestFile("dir-probe.conf", "");
  dir = dir.substr(0, dir.rfind('/'));
  ConfigFile file = ReadConfigFile(dir, false);
  ASSERT_EQ(file.errors.size(), 1u);
  EXPECT_THAT(file.errors[0], HasSubstr(": cannot read config file: Is a "
                                        "directory"));
}

// Refused without being read: a device that never ends, a pipe without a
// writer (opening it must not block), a file over the limit.
TEST(ReadConfigFileTest, OnlyRegularFilesOfBoundedSizeAreRead) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    ConfigFile file = ReadConfigFile(device, true);
    ASSERT_EQ(file.errors.size(), 1u) << device;
    EXPECT_THAT(file.errors[0], HasSubstr("not a regular file")) << device;
  }
  std::string fifo = WriteTestFile("fifo-probe.conf", "") + ".fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ConfigFile from_fifo = ReadConfigFile(fifo, true);
  ASSERT_EQ(from_fifo.errors.size(), 1u);
  EXPECT_THAT(from_fifo.errors[0], HasSubstr("not a regular file"));
  unlink(fifo.c_str());
  std::string big = WriteTestFile(
      "big.conf", std::string(kMaxConfigFileBytes + 1, '#'));
  ConfigFile too_big = ReadConfigFile(big, true);
  ASSERT_EQ(too_big.errors.size(), 1u);
  EXPECT_THAT(too_big.errors[0], HasSubstr("more than the 1048576 read"));
  // At the limit it is read (comments only: nothing set).
  std::string fits = WriteTestFile(
      "fits.conf", std::string(kMaxConfigFileBytes - 1, '#') + "\n");
  EXPECT_THAT(ReadConfigFile(fits, true).errors, IsEmpty());
}

TEST(ReadConfigFileTest, TheExampleFileIsValid) {
  ConfigFile file =
      ReadConfigFile("fabric/api/config/fabric.conf.example", true);
  EXPECT_THAT(file.errors, IsEmpty());
  EXPECT_EQ(file.settings.at("FI_PROVIDER").value, "^verbs");
  EXPECT_EQ(file.settings.at("FI_TCP_IFACE").value, "lo");
  EXPECT_EQ(file.settings.at("FI_UDP_ATTR_MAX_MSG_SIZE").value, "1472");
}

}  // namespace
}  // namespace fabric

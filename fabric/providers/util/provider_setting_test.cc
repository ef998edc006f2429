// A setting declared once: fi_getparams shows its help with the default,
// Get() answers the default while unset, the environment's value when set,
// and the default again when that value is not of its type.
#include "fabric/providers/util/provider_setting.h"

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::HasSubstr;

// A provider with nothing to offer: only its name matters here.
class NamedOnlyProvider : public Provider {
 public:
  NamedOnlyProvider() : Provider("settingtest", FI_VERSION(1, 0)) {}
  int default_priority() const override { return 0; }
  InfoPtr DefaultInfo() const override { return nullptr; }
  absl::StatusOr<InfoList> Discover(const GetInfoRequest&) const override {
    return InfoList();
  }
  AttrSupport SupportFor(const fi_info&) const override { return {}; }
  int OpenFabric(const fi_fabric_attr&, fid_fabric**, void*) const override {
    return -FI_ENOSYS;
  }
};

constexpr BoolSetting kFlag = {"flag", true, "Whether to do the thing"};
constexpr SizeSetting kBytes = {"bytes", 4096, "How many bytes"};
constexpr StringSetting kNames = {"names", "all of them", "Which ones"};

class ProviderSettingTest : public ConfigTest {
 protected:
  void SetUp() override {
    ConfigTest::SetUp();
    kFlag.Define(provider_);
    kBytes.Define(provider_);
    kNames.Define(provider_);
  }

  // The help fi_getparams shows for FI_SETTINGTEST_<NAME>.
  std::string Help(const std::string& env_name) {
    fi_param* params = nullptr;
    int count = 0;
    EXPECT_EQ(fi_getparams(&params, &count), 0);
    std::string help;
    for (int i = 0; i < count; ++i) {
      if (env_name == params[i].name) help = params[i].help_string;
    }
    fi_freeparams(params);
    return help;
  }

  NamedOnlyProvider provider_;
};

TEST_F(ProviderSettingTest, HelpEndsWithTheDefault) {
  EXPECT_THAT(Help("FI_SETTINGTEST_FLAG"),
              HasSubstr("Whether to do the thing (default: yes)"));
  EXPECT_THAT(Help("FI_SETTINGTEST_BYTES"),
              HasSubstr("How many bytes (default: 4096)"));
  EXPECT_THAT(Help("FI_SETTINGTEST_NAMES"),
              HasSubstr("Which ones (default: all of them)"));
}

TEST_F(ProviderSettingTest, UnsetIsTheDefault) {
  EXPECT_TRUE(kFlag.Get(provider_));
  EXPECT_EQ(kBytes.Get(provider_), 4096u);
  EXPECT_EQ(kNames.Get(provider_), "");
}

TEST_F(ProviderSettingTest, TheEnvironmentSetsThem) {
  SetEnv("FI_SETTINGTEST_FLAG", "0");
  SetEnv("FI_SETTINGTEST_BYTES", "65536");
  SetEnv("FI_SETTINGTEST_NAMES", "lo,eth0");
  EXPECT_FALSE(kFlag.Get(provider_));
  EXPECT_EQ(kBytes.Get(provider_), 65536u);
  EXPECT_EQ(kNames.Get(provider_), "lo,eth0");
}

TEST_F(ProviderSettingTest, AValueNotOfItsTypeLeavesTheDefault) {
  SetEnv("FI_SETTINGTEST_FLAG", "perhaps");
  SetEnv("FI_SETTINGTEST_BYTES", "many");
  EXPECT_TRUE(kFlag.Get(provider_));
  EXPECT_EQ(kBytes.Get(provider_), 4096u);
}

}  // namespace
}  // namespace fabric

// An application's own logger, imported with fi_import_log (fi_ext.h):
// fi_open("logging") -> OpenLogging, fi_import_fid, fi_close.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>
#include <string.h>

#include <string>
#include <vector>

#include "fabric/api/config/log_ops.h"
#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// The core's fi_open hands "logging" to OpenLogging; this test links the
// configuration library alone, so it brings that much of fi_open itself.
extern "C" int fi_open(uint32_t version, const char* name, void* attr,
                       size_t attr_len, uint64_t flags, struct fid** fid,
                       void* context) {
  if (name == nullptr || strcmp(name, "logging") != 0 || attr_len != 0) {
    return -FI_EINVAL;
  }
  return fabric::OpenLogging(version, flags, fid, context);
}

namespace fabric {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

constexpr uint32_t kVersion = FI_VERSION(1, 18);

const fi_provider kTcp = TestProvider("tcp");
const fi_provider kUdp = TestProvider("udp");

// What the application's logger received.
std::vector<std::string> app_messages;
std::vector<uint64_t> app_enabled_flags;

int AppEnabled(const struct fi_provider* prov, enum fi_log_level level,
               enum fi_log_subsys subsys, uint64_t flags) {
  app_enabled_flags.push_back(flags);
  return 1;
}

int AppReady(const struct fi_provider* prov, enum fi_log_level level,
             enum fi_log_subsys subsys, uint64_t flags, uint64_t* showtime) {
  return level == FI_LOG_DEBUG;
}

void AppLog(const struct fi_provider* prov, enum fi_log_level level,
            enum fi_log_subsys subsys, const char* func, int line,
            const char* msg) {
  app_messages.push_back(std::string(prov->name) + "/" + func + "/" + msg);
}

class LogImportTest : public ConfigTest {
 protected:
  void SetUp() override {
    ConfigTest::SetUp();
    app_messages.clear();
    app_enabled_flags.clear();
  }
};

TEST_F(LogImportTest, ImportedLogReceivesTheMessages) {
  SetEnv("FI_LOG_LEVEL", "warn");
  struct fi_ops_log ops = {0, nullptr, nullptr, &AppLog};
  struct fid_logging mine = {};
  mine.ops = &ops;
  ASSERT_EQ(fi_import_log(kVersion, 0, &mine), 0);
  EXPECT_EQ(mine.fid.fclass, static_cast<size_t>(FI_CLASS_LOG));

  CapturedStderr err;
  FI_WARN(&kTcp, FI_LOG_AV, "hello %d\n", 5);
  FI_INFO(&kTcp, FI_LOG_AV, "filtered by the library's enabled\n");
  EXPECT_THAT(err.Finish(), IsEmpty());
  EXPECT_THAT(app_messages, ElementsAre("tcp/TestBody/hello 5\n"));

  ASSERT_EQ(fi_close(&mine.fid), 0);
  CapturedStderr after;
  FI_WARN(&kTcp, FI_LOG_AV, "back on stderr\n");
  EXPECT_THAT(after.Finish(), HasSubstr("<warn> back on stderr\n"));
  EXPECT_THAT(app_messages, ElementsAre("tcp/TestBody/hello 5\n"));
}

TEST_F(LogImportTest, ImportedEnabledDecidesAndSeesTheProviderFilter) {
  SetEnv("FI_LOG_PROV", "udp");
  struct fi_ops_log ops = {0, &AppEnabled, nullptr, &AppLog};
  struct fid_logging mine = {};
  mine.ops = &ops;
  ASSERT_EQ(fi_import_log(kVersion, 0, &mine), 0);

  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_DEBUG, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(&kUdp, FI_LOG_DEBUG, FI_LOG_CORE));
  EXPECT_THAT(app_enabled_flags, ElementsAre(FI_LOG_PROV_FILTERED, 0u));

  // The library's ready asks the enabled in use.
  uint64_t showtime = 0;
  EXPECT_TRUE(fi_log_ready(&kUdp, FI_LOG_DEBUG, FI_LOG_CORE, &showtime));
  EXPECT_GT(showtime, 0u);
  EXPECT_EQ(app_enabled_flags.size(), 3u);
  ASSERT_EQ(fi_close(&mine.fid), 0);
}

TEST_F(LogImportTest, ImportedReadyDecides) {
  struct fi_ops_log ops = {0, nullptr, &AppReady, &AppLog};
  struct fid_logging mine = {};
  mine.ops = &ops;
  ASSERT_EQ(fi_import_log(kVersion, 0, &mine), 0);
  uint64_t showtime = 0;
  EXPECT_TRUE(fi_log_ready(&kTcp, FI_LOG_DEBUG, FI_LOG_CORE, &showtime));
  EXPECT_FALSE(fi_log_ready(&kTcp, FI_LOG_WARN, FI_LOG_CORE, &showtime));
  ASSERT_EQ(fi_close(&mine.fid), 0);
}

TEST_F(LogImportTest, LoggingCanBeOpenedAgainOnlyAfterTheImportIsClosed) {
  struct fi_ops_log ops = {0, nullptr, nullptr, &AppLog};
  struct fid_logging mine = {};
  mine.ops = &ops;
  ASSERT_EQ(fi_import_log(kVersion, 0, &mine), 0);

  struct fid* logging = nullptr;
  EXPECT_EQ(OpenLogging(kVersion, 0, &logging, nullptr), -FI_EALREADY);
  struct fid_logging second = {};
  second.ops = &ops;
  EXPECT_EQ(fi_import_log(kVersion, 0, &second), -FI_EALREADY);

  ASSERT_EQ(fi_close(&mine.fid), 0);
  ASSERT_EQ(OpenLogging(kVersion, 0, &logging, nullptr), 0);
  EXPECT_EQ(fi_close(logging), 0);
}

TEST_F(LogImportTest, OpenLoggingChecksItsArguments) {
  struct fid* logging = nullptr;
  EXPECT_EQ(OpenLogging(FI_VERSION(1, 12), 0, &logging, nullptr), -FI_EINVAL);
  EXPECT_EQ(OpenLogging(kVersion, 1, &logging, nullptr), -FI_EBADFLAGS);
  EXPECT_EQ(OpenLogging(kVersion, 0, nullptr, nullptr), -FI_EINVAL);
  EXPECT_EQ(logging, nullptr);
}

TEST_F(LogImportTest, OpenedLoggingIsTheLibrarysOwnLogger) {
  int context = 0;
  struct fid* logging = nullptr;
  ASSERT_EQ(OpenLogging(FI_VERSION(1, 13), 0, &logging, &context), 0);
  EXPECT_EQ(logging->fclass, static_cast<size_t>(FI_CLASS_LOG));
  EXPECT_EQ(logging->context, &context);
  auto* own = reinterpret_cast<struct fid_logging*>(logging);
  ASSERT_NE(own->ops, nullptr);
  EXPECT_EQ(own->ops->size, sizeof(struct fi_ops_log));
  CapturedStderr err;
  own->ops->log(&kTcp, FI_LOG_INFO, FI_LOG_MR, "Fn", 3, "direct\n");
  EXPECT_THAT(err.Finish(),
              MatchesRegex("libfabric:[0-9]+:[0-9]+::tcp:mr:Fn\\(\\):3<info> "
                           "direct\n"));
  EXPECT_EQ(fi_control(logging, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_close(logging), 0);
}

TEST_F(LogImportTest, ImportRejectsWhatIsNotALoggingFid) {
  struct fi_ops_log ops = {sizeof(struct fi_ops_log), nullptr, nullptr,
                           &AppLog};
  struct fid_logging mine = {};
  mine.fid.fclass = FI_CLASS_LOG;
  mine.ops = &ops;
  struct fid* logging = nullptr;
  ASSERT_EQ(OpenLogging(kVersion, 0, &logging, nullptr), 0);

  EXPECT_EQ(fi_import_fid(logging, &mine.fid, 1), -FI_EINVAL);
  EXPECT_EQ(fi_import_fid(logging, nullptr, 0), -FI_EINVAL);
  mine.fid.fclass = FI_CLASS_FABRIC;
  EXPECT_EQ(fi_import_fid(logging, &mine.fid, 0), -FI_EINVAL);
  mine.fid.fclass = FI_CLASS_LOG;
  ops.size = sizeof(struct fi_ops_log) - 1;
  EXPECT_EQ(fi_import_fid(logging, &mine.fid, 0), -FI_EINVAL);
  mine.ops = nullptr;
  EXPECT_EQ(fi_import_fid(logging, &mine.fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_close(logging), 0);

  // Nothing was imported.
  ASSERT_EQ(OpenLogging(kVersion, 0, &logging, nullptr), 0);
  EXPECT_EQ(fi_close(logging), 0);
  EXPECT_THAT(app_messages, IsEmpty());
}

}  // namespace
}  // namespace fabric

// fi_log_enabled, fi_log_ready and fi_log with the library's own logger:
// FI_LOG_LEVEL / FI_LOG_PROV / FI_LOG_SUBSYS / FI_LOG_INTERVAL from the
// environment or the configuration file, and libfabric's line on stderr.
#include "fabric/api/config/log.h"

#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::SizeIs;
using ::testing::StartsWith;

const fi_provider kTcp = TestProvider("tcp");
const fi_provider kUdp = TestProvider("udp");
const fi_provider kCore = TestProvider("core");
const fi_provider kNameless = TestProvider(nullptr);

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// One message per level, then what was logged.
std::vector<std::string> LogEachLevel(const fi_provider* prov,
                                      enum fi_log_subsys subsys) {
  CapturedStderr err;
  FI_WARN(prov, subsys, "w\n");
  FI_TRACE(prov, subsys, "t\n");
  FI_INFO(prov, subsys, "i\n");
  FABRIC_LOG_DEBUG(prov, subsys, "d\n");
  std::vector<std::string> levels;
  for (const std::string& line : Lines(err.Finish())) {
    levels.push_back(line.substr(line.find('<')));
  }
  return levels;
}

class LogTest : public ConfigTest {};

TEST_F(LogTest, NothingIsLoggedByDefault) {
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_THAT(LogEachLevel(&kTcp, FI_LOG_CORE), IsEmpty());
}

TEST_F(LogTest, LevelIncludesTheLevelsBeforeIt) {
  SetEnv("FI_LOG_LEVEL", "warn");
  EXPECT_THAT(LogEachLevel(&kTcp, FI_LOG_CORE), ElementsAre("<warn> w"));
  SetEnv("FI_LOG_LEVEL", "info");
  EXPECT_THAT(LogEachLevel(&kTcp, FI_LOG_CORE),
              ElementsAre("<warn> w", "<trace> t", "<info> i"));
  SetEnv("FI_LOG_LEVEL", "DEBUG");
  EXPECT_THAT(LogEachLevel(&kTcp, FI_LOG_CORE),
              ElementsAre("<warn> w", "<trace> t", "<info> i", "<debug> d"));
}

TEST_F(LogTest, LineHasLibfabricsFormat) {
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  long before = static_cast<long>(time(nullptr));
  int line = __LINE__ + 1;
  FI_WARN(&kTcp, FI_LOG_FABRIC, "hello %d\n", 42);
  long after = static_cast<long>(time(nullptr));
  std::string out = err.Finish();

  std::string prefix = absl::StrCat("libfabric:", getpid(), ":");
  ASSERT_THAT(out, StartsWith(prefix));
  std::string rest = out.substr(prefix.size());
  long seconds = std::stol(rest.substr(0, rest.find(':')));
  EXPECT_GE(seconds, before);
  EXPECT_LE(seconds, after);
  EXPECT_EQ(
      rest.substr(rest.find(':')),
      absl::StrCat("::tcp:fabric:TestBody():", line, "<warn> hello 42\n"));
}

TEST_F(LogTest, CoreIsNamedCore) {
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  FI_WARN(nullptr, FI_LOG_CORE, "from null\n");
  FI_WARN(&kNameless, FI_LOG_AV, "from nameless\n");
  fi_log(&kCore, FI_LOG_WARN, FI_LOG_CNTR, "Func", 7, "from core %s\n", "x");
  std::vector<std::string> lines = Lines(err.Finish());
  ASSERT_THAT(lines, SizeIs(3));
  EXPECT_THAT(lines[0], MatchesRegex(".*::core:core:TestBody\\(\\):[0-9]+"
                                     "<warn> from null"));
  EXPECT_THAT(lines[1], HasSubstr("::core:av:TestBody():"));
  EXPECT_THAT(lines[2], EndsWith("::core:cntr:Func():7<warn> from core x"));
}

TEST_F(LogTest, LongMessagesAreCutAt1023Characters) {
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  FI_WARN(&kTcp, FI_LOG_CORE, "%s", std::string(2000, 'x').c_str());
  std::string out = err.Finish();
  EXPECT_THAT(out, EndsWith("<warn> " + std::string(1023, 'x')));
}

TEST_F(LogTest, ProvidersFilterLeavesOutOtherProvidersButNotTheCore) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_PROV", "TCP");
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_FALSE(fi_log_enabled(&kUdp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(nullptr, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(&kCore, FI_LOG_WARN, FI_LOG_CORE));

  SetEnv("FI_LOG_PROV", "^tcp");
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(&kUdp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(nullptr, FI_LOG_WARN, FI_LOG_CORE));
}

TEST_F(LogTest, SubsystemsFilter) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_SUBSYS", "core,EP_DATA");
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_EP_DATA));
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_FABRIC));

  SetEnv("FI_LOG_SUBSYS", "^core");
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CNTR));
}

TEST_F(LogTest, OutOfRangeLevelsAndSubsystemsAreNotLogged) {
  SetEnv("FI_LOG_LEVEL", "debug");
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_MAX, FI_LOG_CORE));
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_SUBSYS_MAX));
  EXPECT_FALSE(
      fi_log_enabled(&kTcp, static_cast<fi_log_level>(-1), FI_LOG_CORE));
}

TEST_F(LogTest, UnknownLevelLogsWarningsAndSaysSo) {
  SetEnv("FI_LOG_LEVEL", "loud");
  CapturedStderr err;
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_TRACE, FI_LOG_CORE));
  EXPECT_THAT(err.Finish(),
              HasSubstr("<warn> FI_LOG_LEVEL=loud (from environment): unknown "
                        "level; logging warnings\n"));
}

TEST_F(LogTest, UnknownSubsystemIsReported) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_SUBSYS", "^disk");
  CapturedStderr err;
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_THAT(err.Finish(),
              HasSubstr("FI_LOG_SUBSYS=^disk (from environment): unknown "
                        "subsystem 'disk'"));
}

TEST_F(LogTest, SettingsComeFromTheFileUnlessTheEnvironmentSetsThem) {
  std::string path = WriteTestFile(
      "log.conf",
      "logging { level: \"info\" providers: \"udp\" subsystems: \"av\" }\n");
  SetEnv("FI_CONFIG", path);
  EXPECT_TRUE(fi_log_enabled(&kUdp, FI_LOG_INFO, FI_LOG_AV));
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_INFO, FI_LOG_AV));
  EXPECT_FALSE(fi_log_enabled(&kUdp, FI_LOG_INFO, FI_LOG_CQ));

  SetEnv("FI_LOG_LEVEL", "warn");
  EXPECT_FALSE(fi_log_enabled(&kUdp, FI_LOG_INFO, FI_LOG_AV));
  EXPECT_TRUE(fi_log_enabled(&kUdp, FI_LOG_WARN, FI_LOG_AV));
}

TEST_F(LogTest, MalformedFileLogsNothingFromIt) {
  std::string path =
      WriteTestFile("log-bad.conf", "logging { level: \"info\" colour: 1 }\n");
  SetEnv("FI_CONFIG", path);
  EXPECT_FALSE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
}

// Lines logged by `calls` calls of one FI_LOG_SPARSE site; each `Site` has
// its own (its own static showtime).
template <int Site>
int SparseLines(int calls) {
  CapturedStderr err;
  for (int i = 0; i < calls; ++i) {
    FABRIC_LOG_WARN_SPARSE(&kTcp, FI_LOG_EP_DATA, "queue full\n");
  }
  return static_cast<int>(Lines(err.Finish()).size());
}

TEST_F(LogTest, SparseMessagesWaitTheInterval) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_INTERVAL", "100000");
  EXPECT_EQ(SparseLines<1>(3), 1);
  SetEnv("FI_LOG_INTERVAL", "0");
  EXPECT_EQ(SparseLines<2>(3), 3);
}

TEST_F(LogTest, ReadySetsTheNextTimeOnlyWhenEnabled) {
  uint64_t showtime = 0;
  EXPECT_FALSE(fi_log_ready(&kTcp, FI_LOG_WARN, FI_LOG_CORE, &showtime));
  EXPECT_EQ(showtime, 0u);

  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_INTERVAL", "60000");
  EXPECT_TRUE(fi_log_ready(&kTcp, FI_LOG_WARN, FI_LOG_CORE, &showtime));
  EXPECT_GT(showtime, 60000u);
  EXPECT_FALSE(fi_log_ready(&kTcp, FI_LOG_WARN, FI_LOG_CORE, &showtime));
  showtime = 0;
  EXPECT_TRUE(fi_log_ready(&kTcp, FI_LOG_WARN, FI_LOG_CORE, &showtime));
}

TEST_F(LogTest, MalformedIntervalKeepsTheDefault) {
  SetEnv("FI_LOG_LEVEL", "warn");
  SetEnv("FI_LOG_INTERVAL", "soon");
  CapturedStderr err;
  EXPECT_TRUE(fi_log_enabled(&kTcp, FI_LOG_WARN, FI_LOG_CORE));
  EXPECT_THAT(err.Finish(),
              HasSubstr("FI_LOG_INTERVAL=soon (from environment): not a "
                        "number of milliseconds; using 2000"));
  EXPECT_EQ(SparseLines<3>(2), 1);
}

TEST_F(LogTest, LoggingKeepsErrno) {
  SetEnv("FI_LOG_LEVEL", "warn");
  CapturedStderr err;
  errno = EAGAIN;
  FABRIC_LOG_WARN(&kTcp, FI_LOG_CORE, "x\n");
  EXPECT_EQ(errno, EAGAIN);
}

}  // namespace
}  // namespace fabric

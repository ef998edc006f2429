// The first load of the configuration from many threads at once: one read,
// one check, one catalog call, the same answer everywhere. Run it under
// --config=tsan.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/settings.h"
#include "fabric/api/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using ::testing::Each;
using ::testing::Eq;

constexpr int kThreads = 16;

fi_provider tcp = TestProvider("tcp");
std::atomic<int> catalog_calls{0};

std::vector<std::string> CountingCatalog() {
  ++catalog_calls;
  fi_param_define(&tcp, "iface", FI_PARAM_STRING, "Specify interface name");
  return {"tcp", "udp"};
}

// Runs `work(i)` on kThreads threads released together.
template <typename Work>
void RunTogether(Work work) {
  std::mutex mu;
  std::condition_variable go;
  bool started = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      {
        std::unique_lock<std::mutex> lock(mu);
        go.wait(lock, [&] { return started; });
      }
      work(i);
    });
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    started = true;
  }
  go.notify_all();
  for (std::thread& thread : threads) thread.join();
}

class SettingsConcurrencyTest : public ConfigTest {
 protected:
  void SetUp() override {
    ConfigTest::SetUp();
    SetProviderCatalog(&CountingCatalog);
    catalog_calls = 0;
  }
  void TearDown() override {
    SetProviderCatalog(nullptr);
    ConfigTest::TearDown();
  }
};

TEST_F(SettingsConcurrencyTest, FirstLoadFromManyThreadsIsOneLoad) {
  SetEnv("FI_CONFIG",
         WriteTestFile("concurrent.conf",
                       "enabled_providers: \"^udp\"\n"
                       "logging { level: \"warn\" }\n"
                       "provider {\n"
                       "  name: \"tcp\"\n"
                       "  priority: 4\n"
                       "  param { name: \"iface\" value: \"lo\" }\n"
                       "}\n"));
  std::vector<int> ok(kThreads), enabled(kThreads), priority(kThreads),
      logging(kThreads), iface(kThreads);
  RunTogether([&](int i) {
    // Every entry point that loads, in a different order per thread.
    if (i % 2 == 0) logging[i] = fi_log_enabled(&tcp, FI_LOG_WARN, FI_LOG_CORE);
    ok[i] = EnsureConfigLoaded().ok();
    enabled[i] = ProviderEnabled("tcp") && !ProviderEnabled("udp");
    priority[i] = ProviderPriority("tcp", 0);
    char* value = nullptr;
    iface[i] = fi_param_get_str(&tcp, "iface", &value) == 0 &&
               std::string(value) == "lo";
    if (i % 2 == 1) logging[i] = fi_log_enabled(&tcp, FI_LOG_WARN, FI_LOG_CORE);
  });
  EXPECT_THAT(ok, Each(Eq(1)));
  EXPECT_THAT(enabled, Each(Eq(1)));
  EXPECT_THAT(priority, Each(Eq(4)));
  EXPECT_THAT(logging, Each(Eq(1)));
  EXPECT_THAT(iface, Each(Eq(1)));
  EXPECT_EQ(catalog_calls.load(), 1);
}

TEST_F(SettingsConcurrencyTest, EveryThreadGetsTheSameError) {
  SetEnv("FI_CONFIG",
         WriteTestFile("concurrent-bad.conf", "provider { name: \"tpc\" }\n"));
  std::vector<absl::Status> results(kThreads);
  RunTogether([&](int i) { results[i] = EnsureConfigLoaded(); });
  ASSERT_FALSE(results[0].ok());
  EXPECT_THAT(results, Each(Eq(results[0])));
  EXPECT_EQ(catalog_calls.load(), 1);
}

TEST_F(SettingsConcurrencyTest, ParamsAreDefinedAndListedConcurrently) {
  SetEnv("FI_LOG_LEVEL", "debug");
  CapturedStderr err;  // the debug lines are not what this test is about
  std::vector<int> defined(kThreads), listed(kThreads);
  RunTogether([&](int i) {
    static fi_provider prov = TestProvider("many");
    std::string name = absl::StrCat("knob_", i);
    defined[i] =
        fi_param_define(&prov, name.c_str(), FI_PARAM_INT, "Knob %d", i) == 0;
    struct fi_param* params = nullptr;
    int count = 0;
    listed[i] = fi_getparams(&params, &count) == 0 && count > 0;
    fi_freeparams(params);
  });
  err.Finish();
  EXPECT_THAT(defined, Each(Eq(1)));
  EXPECT_THAT(listed, Each(Eq(1)));
}

}  // namespace
}  // namespace fabric

// File: fabric/api/config/test_util.h
//
// What the tests of this package share: a fixture with a clean environment
// (no FI_* variables, no configuration file) and a fresh configuration for
// each test, files under TEST_TMPDIR, and stderr captured.
//
//   class MyTest : public ConfigTest {};
//   TEST_F(MyTest, Reads) {
//     SetEnv("FI_CONFIG", WriteTestFile("a.conf", "logging {}"));
//     CapturedStderr err;
//     ...
//     EXPECT_THAT(err.Finish(), HasSubstr("..."));
//   }
#ifndef FABRIC_API_CONFIG_TEST_UTIL_H_
#define FABRIC_API_CONFIG_TEST_UTIL_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace fabric {

// Each test starts with no FI_* environment variables but FI_CONFIG=""
// (no configuration file) and a configuration not yet loaded; the
// environment is restored afterwards.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Sets or unsets a variable for this test; the configuration is reset so
  // that the next use reads it.
  void SetEnv(const std::string& name, const std::string& value);
  void UnsetEnv(const std::string& name);

 private:
  std::map<std::string, std::string> saved_;  // every FI_* variable before
};

// A provider with only its name set, to define parameters and log under.
fi_provider TestProvider(const char* name);

// Writes `contents` to TEST_TMPDIR/`name`; returns the path.
std::string WriteTestFile(absl::string_view name, absl::string_view contents);

// Everything written to stderr (fd 2) from construction to Finish().
class CapturedStderr {
 public:
  CapturedStderr();
  ~CapturedStderr();
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

  // Stops capturing and returns what was written.
  std::string Finish();

 private:
  std::string path_;
  int saved_fd_ = -1;
};

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_TEST_UTIL_H_

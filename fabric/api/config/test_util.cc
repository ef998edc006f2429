#include "fabric/api/config/test_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/config/settings.h"

extern char** environ;

namespace fabric {
namespace {

std::string TestTmpDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

std::map<std::string, std::string> FabricEnvironment() {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    absl::string_view var(*entry);
    if (!absl::StartsWith(var, "FI_")) continue;
    size_t equals = var.find('=');
    vars[std::string(var.substr(0, equals))] =
        std::string(var.substr(equals + 1));
  }
  return vars;
}

void ClearFabricEnvironment() {
  for (const auto& [name, value] : FabricEnvironment()) unsetenv(name.c_str());
}

// A default path that does not exist, in place of /etc/fabric/fabric.conf.
std::string NoDefaultFile() {
  return absl::StrCat(TestTmpDir(), "/no-such-dir/fabric.conf");
}

}  // namespace

void ConfigTest::SetUp() {
  saved_ = FabricEnvironment();
  ClearFabricEnvironment();
  setenv("FI_CONFIG", "", 1);
  ResetConfigForTesting(NoDefaultFile());
}

void ConfigTest::TearDown() {
  ClearFabricEnvironment();
  for (const auto& [name, value] : saved_) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  ResetConfigForTesting();
}

void ConfigTest::SetEnv(const std::string& name, const std::string& value) {
  setenv(name.c_str(), value.c_str(), 1);
  ResetConfigForTesting(NoDefaultFile());
}

void ConfigTest::UnsetEnv(const std::string& name) {
  unsetenv(name.c_str());
  ResetConfigForTesting(NoDefaultFile());
}

fi_provider TestProvider(const char* name) {
  fi_provider provider = {};
  provider.name = name;
  return provider;
}

std::string WriteTestFile(absl::string_view name, absl::string_view contents) {
  std::string path = absl::StrCat(TestTmpDir(), "/", name);
  std::ofstream out(path, std::ios::trunc);
  out << contents;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path;
}

CapturedStderr::CapturedStderr() {
  path_ = absl::StrCat(TestTmpDir(), "/stderr-", getpid(), "-",
                       reinterpret_cast<uintptr_t>(this));
  fflush(stderr);
  saved_fd_ = dup(STDERR_FILENO);
  int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDERR_FILENO);
  close(fd);
}

CapturedStderr::~CapturedStderr() { Finish(); }

std::string CapturedStderr::Finish() {
  if (saved_fd_ < 0) return "";
  fflush(stderr);
  dup2(saved_fd_, STDERR_FILENO);
  close(saved_fd_);
  saved_fd_ = -1;
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path_.c_str());
  return text.str();
}

}  // namespace fabric

#include "tools/fi_info/version.h"

#include <rdma/fabric.h>

#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace fi_info_tool {
namespace {

TEST(VersionTest, ToolVersionIsTheHeadersApiVersion) {
  EXPECT_EQ(ToolVersion(), std::to_string(FI_MAJOR_VERSION) + "." +
                               std::to_string(FI_MINOR_VERSION) + ".0");
}

TEST(VersionTest, PrintsToolLibraryAndApiVersions) {
  std::ostringstream out;
  PrintVersions(out, "fi_info");
  const std::string expected =
      "fi_info: " + ToolVersion() + "\n" +
      "libfabric: " + fi_tostr("1", FI_TYPE_VERSION) + "\n" +
      "libfabric api: " + std::to_string(FI_MAJOR_VERSION) + "." +
      std::to_string(FI_MINOR_VERSION) + "\n";
  EXPECT_EQ(out.str(), expected);
}

}  // namespace
}  // namespace fi_info_tool

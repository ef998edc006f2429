#include "tools/fi_info/version.h"

#include <rdma/fabric.h>

#include "tools/fi_info/tostr_text.h"

namespace fi_info_tool {

std::string ToolVersion() {
  return std::to_string(FI_MAJOR_VERSION) + "." +
         std::to_string(FI_MINOR_VERSION) + ".0";
}

void PrintVersions(std::ostream& out, const char* program) {
  out << program << ": " << ToolVersion() << "\n";
  // FI_TYPE_VERSION ignores its data; libfabric's fi_info passes "1".
  out << "libfabric: " << TostrText("1", FI_TYPE_VERSION) << "\n";
  out << "libfabric api: " << FI_MAJOR_VERSION << "." << FI_MINOR_VERSION
      << "\n";
}

}  // namespace fi_info_tool

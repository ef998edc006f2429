// --version: fi_info's, the library's and the API's versions.
#ifndef TOOLS_FI_INFO_VERSION_H_
#define TOOLS_FI_INFO_VERSION_H_

#include <ostream>
#include <string>

namespace fi_info_tool {

// This fi_info's version: the API version of the headers it is built with,
// as MAJOR.MINOR.0 (this project's releases are numbered after the API they
// implement; see libfabric.pc.in).
std::string ToolVersion();

// "PROGRAM: TOOL", "libfabric: LIBRARY" (fi_tostr of FI_TYPE_VERSION, from
// the library in use) and "libfabric api: MAJOR.MINOR" (the headers'), as
// libfabric's fi_info prints them.
void PrintVersions(std::ostream& out, const char* program);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_VERSION_H_

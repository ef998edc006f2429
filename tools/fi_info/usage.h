// fi_info's usage and help texts.
#ifndef TOOLS_FI_INFO_USAGE_H_
#define TOOLS_FI_INFO_USAGE_H_

#include <ostream>

namespace fi_info_tool {

// "Usage: PROGRAM" and libfabric's fi_info options, exactly as libfabric's
// fi_info prints them (after a rejected option, and first in the help).
void PrintUsage(std::ostream& out, const char* program);

// -h/--help: the usage, then this tool's options (--format, --explain) and
// what they do, including the JSON format.
void PrintHelp(std::ostream& out, const char* program);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_USAGE_H_

// fi_info's text output, byte for byte as libfabric's fi_info prints it.
#ifndef TOOLS_FI_INFO_TEXT_OUTPUT_H_
#define TOOLS_FI_INFO_TEXT_OUTPUT_H_

#include <rdma/fabric.h>

#include <optional>
#include <ostream>
#include <string>

namespace fi_info_tool {

// -l: "PROV:" and "    version: MAJOR.MINOR" for each fi_info.
void PrintProviders(const fi_info* list, std::ostream& out);

// The default: provider, fabric, domain, version, type and protocol.
void PrintShortInfo(const fi_info* list, std::ostream& out);

// -v: "---" and fi_tostr_r(info, FI_TYPE_INFO) for each fi_info; with a
// substring (-i), only those whose text contains it (ignoring case).
void PrintLongInfo(const fi_info* list,
                   const std::optional<std::string>& substring,
                   std::ostream& out);

// -e: each parameter from fi_getparams (with -g, those whose name contains
// the substring, ignoring case). Returns fi_getparams's error, or 0.
int PrintParams(const std::optional<std::string>& substring, std::ostream& out);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_TEXT_OUTPUT_H_

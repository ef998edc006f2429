// The run of fi_info proper: fi_getinfo with the options, then the output
// they select.
#ifndef TOOLS_FI_INFO_QUERY_H_
#define TOOLS_FI_INFO_QUERY_H_

#include <ostream>

#include "tools/fi_info/options.h"

namespace fi_info_tool {

// Calls fi_getinfo (API version of the headers) and prints what the options
// ask for on `out`. A failure is reported on `errors` as libfabric's fi_info
// reports it ("fi_getinfo: -61"). Returns the exit code libfabric's fi_info
// returns: 0, or the negated error.
int RunQuery(const Options& options, std::ostream& out, std::ostream& errors);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_QUERY_H_

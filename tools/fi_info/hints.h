// The fi_getinfo hints fi_info builds from its options.
#ifndef TOOLS_FI_INFO_HINTS_H_
#define TOOLS_FI_INFO_HINTS_H_

#include <rdma/fabric.h>

#include <memory>

#include "tools/fi_info/options.h"

namespace fi_info_tool {

struct FreeInfo {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};

// An fi_info list (or hints) released with fi_freeinfo.
using UniqueInfo = std::unique_ptr<fi_info, FreeInfo>;

// Hints as libfabric's fi_info makes them: fi_allocinfo, every mode accepted
// (unless -m), every domain mode, every mr_mode bit but FI_MR_BASIC and
// FI_MR_SCALABLE, then the options' caps, ep_type, addr_format and names.
// Null if fi_allocinfo fails.
UniqueInfo MakeHints(const Options& options);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_HINTS_H_

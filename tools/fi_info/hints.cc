#include "tools/fi_info/hints.h"

#include <stdlib.h>
#include <string.h>

namespace fi_info_tool {

UniqueInfo MakeHints(const Options& options) {
  UniqueInfo hints(fi_allocinfo());
  if (hints == nullptr) return hints;
  hints->caps = options.caps;
  hints->mode = options.mode;
  hints->addr_format = static_cast<uint32_t>(options.addr_format);
  hints->ep_attr->type = static_cast<enum fi_ep_type>(options.ep_type);
  hints->domain_attr->mode = ~uint64_t{0};
  hints->domain_attr->mr_mode = ~(FI_MR_BASIC | FI_MR_SCALABLE);
  if (options.provider.has_value()) {
    free(hints->fabric_attr->prov_name);
    hints->fabric_attr->prov_name = strdup(options.provider->c_str());
  }
  if (options.domain.has_value()) {
    free(hints->domain_attr->name);
    hints->domain_attr->name = strdup(options.domain->c_str());
  }
  if (options.fabric.has_value()) {
    free(hints->fabric_attr->name);
    hints->fabric_attr->name = strdup(options.fabric->c_str());
  }
  return hints;
}

}  // namespace fi_info_tool

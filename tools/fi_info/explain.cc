#include "tools/fi_info/explain.h"

#include <stdlib.h>

namespace fi_info_tool {

void RequestExplanations() {
  setenv("FI_LOG_LEVEL", "warn", /*overwrite=*/1);
  setenv("FI_LOG_SUBSYS", "core", /*overwrite=*/1);
}

}  // namespace fi_info_tool

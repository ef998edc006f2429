// fi_log_enabled, fi_log_ready and fi_log: the C entry points of logging
// (rdma/providers/fi_log.h), dispatching to the log functions in use.
#include <rdma/fi_ext.h>
#include <rdma/providers/fi_log.h>
#include <stdarg.h>
#include <stdio.h>

#include "fabric/api/config/log_filter.h"
#include "fabric/api/config/log_ops.h"
#include "fabric/api/core/export.h"

namespace {

// FI_LOG_PROV_FILTERED when FI_LOG_PROV leaves out `prov`.
uint64_t ProviderFlags(const struct fi_provider* prov) {
  return fabric::CurrentLogFilter().FiltersOut(prov) ? FI_LOG_PROV_FILTERED : 0;
}

}  // namespace

extern "C" {

FABRIC_EXPORT int fi_log_enabled(const struct fi_provider* prov,
                                 enum fi_log_level level,
                                 enum fi_log_subsys subsys) {
  return fabric::CurrentLogOps().enabled(prov, level, subsys,
                                         ProviderFlags(prov));
}

FABRIC_EXPORT int fi_log_ready(const struct fi_provider* prov,
                               enum fi_log_level level,
                               enum fi_log_subsys subsys, uint64_t* showtime) {
  return fabric::CurrentLogOps().ready(prov, level, subsys, ProviderFlags(prov),
                                       showtime);
}

FABRIC_EXPORT void fi_log(const struct fi_provider* prov,
                          enum fi_log_level level, enum fi_log_subsys subsys,
                          const char* func, int line, const char* fmt, ...) {
  // libfabric's limit: longer messages are cut.
  char msg[1024] = "";
  if (fmt != nullptr) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
  }
  fabric::CurrentLogOps().log(prov, level, subsys, func, line, msg);
}

}  // extern "C"

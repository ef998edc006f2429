// File: fabric/api/config/log_filter.h
//
// What the library's own logger lets through, from FI_LOG_LEVEL,
// FI_LOG_PROV, FI_LOG_SUBSYS and FI_LOG_INTERVAL (each from the environment,
// else the configuration file), read once on first use as libfabric reads
// them once at start-up. A value that makes no sense is reported at warning
// level and treated as libfabric treats it (an unknown level logs warnings).
//
//   const LogFilter& filter = CurrentLogFilter();
//   bool filtered = filter.FiltersOut(prov);  // FI_LOG_PROV
//   filter.Enabled(FI_LOG_WARN, FI_LOG_CORE, filtered);
#ifndef FABRIC_API_CONFIG_LOG_FILTER_H_
#define FABRIC_API_CONFIG_LOG_FILTER_H_

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>
#include <stdint.h>

#include "fabric/api/config/name_filter.h"

namespace fabric {

struct LogFilter {
  // The most verbose fi_log_level logged; -1 when nothing is.
  int max_level = -1;
  // Bit (1 << subsys) set for each fi_log_subsys logged.
  uint32_t subsystems = 0;
  // The providers logged; the core is always.
  NameFilter providers;
  // Milliseconds between two messages of one FI_LOG_SPARSE call site.
  uint64_t interval_ms = 2000;

  // Whether a message at `level` in `subsys` is logged; `provider_filtered`
  // says FiltersOut() its provider.
  bool Enabled(int level, int subsys, bool provider_filtered) const;

  // Whether FI_LOG_PROV leaves out messages of `provider` (null: the core).
  bool FiltersOut(const struct fi_provider* provider) const;
};

// The filter of this process; computed on first use, thread-safe, valid for
// the life of the process.
const LogFilter& CurrentLogFilter();

// Tests only: forgets the filter, so that the next use reads the settings
// again. Earlier results stay valid.
void ResetLogFilterForTesting();

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_LOG_FILTER_H_

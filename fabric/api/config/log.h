// File: fabric/api/config/log.h
//
// Logging for the library's C++ code (core and providers), on the public
// fi_log_enabled / fi_log_ready / fi_log, so that FI_LOG_LEVEL, FI_LOG_PROV,
// FI_LOG_SUBSYS and an application's imported logger apply to it as to any
// provider's FI_WARN. `prov` is the provider's fi_provider, or null for the
// core; `subsys` an enum fi_log_subsys; then a printf format and arguments.
// Unlike FI_DBG, FABRIC_LOG_DEBUG is always compiled in (FI_LOG_LEVEL=debug
// shows it).
//
//   FABRIC_LOG_WARN(c_provider(), FI_LOG_FABRIC, "no fabric named '%s'\n",
//                   attr.name);
//   FABRIC_LOG_DEBUG(nullptr, FI_LOG_CORE, "read %zu bytes\n", n);
//   // At most once per FI_LOG_INTERVAL (2 s) from this line:
//   FABRIC_LOG_WARN_SPARSE(c_provider(), FI_LOG_EP_DATA, "queue full\n");
//
// A line on stderr reads, as libfabric writes it:
//   libfabric:4242:1700000000::tcp:fabric:OpenFabric():63<warn> no fabric ...
#ifndef FABRIC_API_CONFIG_LOG_H_
#define FABRIC_API_CONFIG_LOG_H_

#include <errno.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_log.h>
#include <stdint.h>

#define FABRIC_LOG(prov, level, subsys, ...) \
  FI_LOG(prov, level, subsys, __VA_ARGS__)

#define FABRIC_LOG_WARN(prov, subsys, ...) \
  FABRIC_LOG(prov, FI_LOG_WARN, subsys, __VA_ARGS__)
#define FABRIC_LOG_TRACE(prov, subsys, ...) \
  FABRIC_LOG(prov, FI_LOG_TRACE, subsys, __VA_ARGS__)
#define FABRIC_LOG_INFO(prov, subsys, ...) \
  FABRIC_LOG(prov, FI_LOG_INFO, subsys, __VA_ARGS__)
#define FABRIC_LOG_DEBUG(prov, subsys, ...) \
  FABRIC_LOG(prov, FI_LOG_DEBUG, subsys, __VA_ARGS__)

#define FABRIC_LOG_WARN_SPARSE(prov, subsys, ...) \
  FI_LOG_SPARSE(prov, FI_LOG_WARN, subsys, __VA_ARGS__)

#endif  // FABRIC_API_CONFIG_LOG_H_

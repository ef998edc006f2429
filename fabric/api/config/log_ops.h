// File: fabric/api/config/log_ops.h
//
// The log functions fi_log_enabled, fi_log_ready and fi_log dispatch to
// (struct fi_ops_log, fi_ext.h). By default the library's own: libfabric's
// filter (log_filter.h) and libfabric's line on stderr,
//
//   libfabric:<pid>:<time>::<prov>:<subsys>:<func>():<line><<level>> <msg>
//
// (<time> is time(NULL); the empty field is libfabric's log prefix, which
// is empty). An application replaces them with fi_import_log, which opens
// "logging" (fi_open -> OpenLogging) and binds its own struct fid_logging to
// it:
//
//   static struct fi_ops_log my_ops = {sizeof(my_ops), NULL, NULL, MyLog};
//   static struct fid_logging mine = {{0}, &my_ops};
//   fi_import_log(FI_VERSION(1, 18), 0, &mine);  // fi_log now calls MyLog
//   fi_close(&mine.fid);                          // the library's own again
//
// As in libfabric: the functions the application leaves null stay as they
// were; while an import is in place, opening "logging" again fails with
// -FI_EALREADY; the library's own `ready` asks the `enabled` in use.
#ifndef FABRIC_API_CONFIG_LOG_OPS_H_
#define FABRIC_API_CONFIG_LOG_OPS_H_

#include <rdma/fabric.h>
#include <rdma/fi_ext.h>
#include <stdint.h>

namespace fabric {

// The log functions in use.
struct LogOps {
  decltype(fi_ops_log::enabled) enabled;
  decltype(fi_ops_log::ready) ready;
  decltype(fi_ops_log::log) log;
};
LogOps CurrentLogOps();

// fi_open(version, "logging", attr, 0, flags, fid, context): the library's
// logging object, to which fi_import_fid binds an application's
// fid_logging. The caller (fi_open) rejects a non-zero attr_len with
// -FI_EINVAL. Returns 0, -FI_EINVAL (null fid, version before 1.13),
// -FI_EBADFLAGS (flags) or -FI_EALREADY (an import is in place).
int OpenLogging(uint32_t version, uint64_t flags, struct fid** fid,
                void* context);

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_LOG_OPS_H_

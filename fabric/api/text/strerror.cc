// fi_strerror: libfabric 1.17's messages for its own error codes, strerror's
// for the errno values below them.
#include <limits.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/api/core/export.h"

namespace {

// Indexed by code - FI_ERRNO_OFFSET.
constexpr const char* kMessages[] = {
    "Unspecified error",                                 // FI_EOTHER
    "Provided buffer is too small",                      // FI_ETOOSMALL
    "Operation not permitted in current state",          // FI_EOPBADSTATE
    "Error available",                                   // FI_EAVAIL
    "Flags not supported",                               // FI_EBADFLAGS
    "Missing or unavailable event queue",                // FI_ENOEQ
    "Invalid resource domain",                           // FI_EDOMAIN
    "Missing or unavailable completion queue",           // FI_ENOCQ
    "CRC error",                                         // FI_ECRC
    "Truncation error",                                  // FI_ETRUNC
    "Required key not available",                        // FI_ENOKEY
    "Missing or unavailable address vector",             // FI_ENOAV
    "Queue has been overrun",                            // FI_EOVERRUN
    "Receiver not ready, no receive buffers available",  // FI_ENORX
};
static_assert(sizeof(kMessages) / sizeof(kMessages[0]) ==
              FI_ERRNO_MAX - FI_ERRNO_OFFSET);

}  // namespace

extern "C" FABRIC_EXPORT const char* fi_strerror(int errnum) {
  // The sign is ignored; INT_MIN, which has no positive counterpart, goes to
  // strerror as it is.
  int code = errnum == INT_MIN ? errnum : abs(errnum);
  if (code < FI_ERRNO_OFFSET) return strerror(code);
  if (code < FI_ERRNO_MAX) return kMessages[code - FI_ERRNO_OFFSET];
  return kMessages[FI_EOTHER - FI_ERRNO_OFFSET];
}

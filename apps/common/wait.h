// File: apps/common/wait.h
//
// Waiting for completions (CQ) and connection events (EQ), each for at
// most kWaitSeconds, so that a lost peer ends the program with a message
// instead of a hang. Reading a CQ or an EQ also makes the provider progress
// (FI_PROGRESS_MANUAL). Anything unexpected prints what and exits 1.
#ifndef APPS_COMMON_WAIT_H_
#define APPS_COMMON_WAIT_H_

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <string>

namespace apps {

constexpr int kWaitSeconds = 10;

// The next completion of `cq` (opened with FI_CQ_FORMAT_MSG); the sender's
// address in *source when not null (fi_cq_readfrom, FI_SOURCE). An error
// completion exits with its fi_strerror and fi_cq_strerror text.
fi_cq_msg_entry WaitCompletion(fid_cq* cq, const char* what,
                               fi_addr_t* source = nullptr);

// The next completion of `cq`, which must be an error (fi_cq_readerr).
fi_cq_err_entry WaitError(fid_cq* cq, const char* what);

// The next event of `eq` (fi_eq_sread), which must be `expected`
// (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN); its connection data in *data
// when not null.
fi_eq_cm_entry WaitEvent(fid_eq* eq, uint32_t expected, const char* what,
                         std::string* data = nullptr);

}  // namespace apps

#endif  // APPS_COMMON_WAIT_H_

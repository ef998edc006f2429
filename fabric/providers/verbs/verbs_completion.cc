#include "fabric/providers/verbs/verbs_completion.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

namespace fabric {
namespace verbs {

int ErrnoOfStatus(int status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return 0;
    case IBV_WC_WR_FLUSH_ERR:  // the queue pair went to error: not done
      return FI_ECANCELED;
    case IBV_WC_LOC_LEN_ERR:  // a receive too short for the message
      return FI_ETRUNC;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_REM_ACCESS_ERR:
      return FI_EACCES;
    case IBV_WC_REM_INV_REQ_ERR:
      return FI_EINVAL;
    case IBV_WC_RETRY_EXC_ERR:  // the peer stopped answering
      return FI_ETIMEDOUT;
    case IBV_WC_RNR_RETRY_EXC_ERR:  // no receive posted at the peer
      return FI_ENORX;
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
      return FI_EREMOTEIO;
    default:
      return FI_EIO;
  }
}

fi_cq_err_entry ErrorOf(const ibv_wc& wc, const WorkRequest& request) {
  fi_cq_err_entry error = {};
  error.op_context = request.context;
  error.flags = request.flags;
  // A failed completion's opcode is not valid (ibv_poll_cq(3)): the request
  // says what it was.
  if (request.flags & FI_RECV) error.buf = request.buf;
  error.err = ErrnoOfStatus(wc.status);
  if (error.err == 0) error.err = FI_EIO;  // not an error: a caller's slip
  error.prov_errno = static_cast<int>(wc.status);
  return error;
}

}  // namespace verbs
}  // namespace fabric

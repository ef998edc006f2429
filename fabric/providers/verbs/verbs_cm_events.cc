#include "fabric/providers/verbs/verbs_cm_events.h"

#include <rdma/fi_errno.h>

namespace fabric {
namespace verbs {
namespace {

CmStep Error(int error, bool carries_data = false) {
  CmStep step;
  step.kind = CmStep::kError;
  step.error = error;
  step.carries_data = carries_data;
  return step;
}

CmStep Step(CmStep::Kind kind, bool carries_data = false) {
  CmStep step;
  step.kind = kind;
  step.carries_data = carries_data;
  return step;
}

// The fi_errno of a failed step: librdmacm's negative errno when it gave
// one, else what the step's failure means.
int FailureOf(int status, int otherwise) {
  return status < 0 ? -status : otherwise;
}

}  // namespace

CmStep StepOf(int event, int status) {
  switch (event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      return status == 0 ? Step(CmStep::kResolveRoute)
                         : Error(FailureOf(status, FI_EADDRNOTAVAIL));
    case RDMA_CM_EVENT_ADDR_ERROR:
      return Error(FailureOf(status, FI_EADDRNOTAVAIL));
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      return status == 0 ? Step(CmStep::kConnect)
                         : Error(FailureOf(status, FI_EHOSTUNREACH));
    case RDMA_CM_EVENT_ROUTE_ERROR:
      return Error(FailureOf(status, FI_EHOSTUNREACH));
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      return Step(CmStep::kConnReq, /*carries_data=*/true);
    // CONNECT_RESPONSE comes instead of ESTABLISHED for ids without a QP.
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
    case RDMA_CM_EVENT_ESTABLISHED:
      return status == 0 ? Step(CmStep::kConnected, /*carries_data=*/true)
                         : Error(FailureOf(status, FI_ECONNREFUSED));
    case RDMA_CM_EVENT_CONNECT_ERROR:
      return Error(FailureOf(status, FI_ECONNREFUSED));
    case RDMA_CM_EVENT_UNREACHABLE:
      return Error(FailureOf(status, FI_EHOSTUNREACH));
    // The status is the reject reason of the InfiniBand CM, not an errno;
    // only a consumer's reject (kConsumerReject: the peer's rdma_reject)
    // carries the peer's fi_reject data.
    case RDMA_CM_EVENT_REJECTED:
      return Error(FI_ECONNREFUSED,
                   /*carries_data=*/status == kConsumerReject);
    // A removed device ends its connections like a disconnect.
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return Step(CmStep::kShutdown);
    // TIMEWAIT_EXIT: the QP may be destroyed; ADDR_CHANGE: the address
    // moved to another device (open connections stay); multicast: RC
    // endpoints join no groups.
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
    case RDMA_CM_EVENT_ADDR_CHANGE:
    case RDMA_CM_EVENT_MULTICAST_JOIN:
    case RDMA_CM_EVENT_MULTICAST_ERROR:
      return Step(CmStep::kIgnore);
  }
  return Step(CmStep::kIgnore);  // an event newer than this code
}

}  // namespace verbs
}  // namespace fabric

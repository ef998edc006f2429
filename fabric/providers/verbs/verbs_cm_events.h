// File: fabric/providers/verbs/verbs_cm_events.h
//
// What an RC endpoint's connection management does with each rdma_cm event
// (librdmacm's rdma_get_cm_event): the next step of an active connect
// (address resolved -> resolve the route -> create the QP and connect), or
// what the application's EQ gets (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN, or
// an error entry). A pure mapping, tested here without a device.
//
//   CmStep step = StepOf(EnumValue(event->event), event->status);
//   switch (step.kind) {
//     case CmStep::kResolveRoute: api.resolve_route(id, kTimeoutMs); break;
//     case CmStep::kError:  // an error entry with step.error (and, for a
//       ...                 // rejection, the peer's fi_reject data)
//   }
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_CM_EVENTS_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_CM_EVENTS_H_

#include <rdma/rdma_cma.h>

namespace fabric {
namespace verbs {

struct CmStep {
  enum Kind {
    kResolveRoute,  // ADDR_RESOLVED: rdma_resolve_route next
    kConnect,       // ROUTE_RESOLVED: create the QP and rdma_connect
    kConnReq,       // CONNECT_REQUEST on a listener: FI_CONNREQ
    kConnected,     // ESTABLISHED (or CONNECT_RESPONSE): FI_CONNECTED
    kShutdown,      // DISCONNECTED, DEVICE_REMOVAL: FI_SHUTDOWN
    kError,         // a step failed: an EQ error entry with `error`
    kIgnore,        // nothing for the application
  };
  Kind kind = kIgnore;
  int error = 0;  // kError: the positive fi_errno
  // The event's private data belongs to the application: a connection
  // request's fi_connect data, an accept's fi_accept data (on the active
  // side), or a consumer rejection's fi_reject data (the error entry's
  // err_data; other rejections carry the CM's own bytes).
  bool carries_data = false;
};

// The InfiniBand CM's reject reason when the peer application rejected
// (IB_CM_REJ_CONSUMER_DEFINED; RoCE uses the same CM).
inline constexpr int kConsumerReject = 28;

// The step for `event` (an rdma_cm_event_type, read with EnumValue: a newer
// kernel may report types this build does not know) with its `status` (0,
// a negative errno for the failures librdmacm reports, or for REJECTED the
// InfiniBand reject reason).
CmStep StepOf(int event, int status);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_CM_EVENTS_H_

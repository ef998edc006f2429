// File: fabric/providers/verbs/verbs_msg_state.h
//
// The connection state of a verbs MSG endpoint: what the application's CM
// calls may do in each state, and what each rdma_cm step (verbs_cm_events.h)
// makes the endpoint do next. Pure: the endpoint performs the actions
// (librdmacm calls, EQ entries); tested here without a device.
//
//   MsgState state;
//   if (int rc = state.Connect(); rc != 0) return rc;  // -FI_EOPBADSTATE
//   api.resolve_addr(id, ...);
//   ...
//   MsgAction action =
//       state.OnStep(StepOf(EnumValue(event->event), event->status));
//   switch (action.kind) {
//     case MsgAction::kResolveRoute: api.resolve_route(id, timeout); break;
//     case MsgAction::kCreateQpAndConnect: ...
//   }
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_MSG_STATE_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_MSG_STATE_H_

#include "fabric/providers/verbs/verbs_cm_events.h"

namespace fabric {
namespace verbs {

// What the endpoint does after a step.
struct MsgAction {
  enum Kind {
    kNone,                // nothing (an event this state does not expect)
    kResolveRoute,        // rdma_resolve_route
    kCreateQpAndConnect,  // rdma_create_qp, then rdma_connect
    kReportConnected,     // FI_CONNECTED on the EQ
    kReportShutdown,      // FI_SHUTDOWN on the EQ; posted work flushes
    kReportError,         // an EQ error entry with `error`
  };
  Kind kind = kNone;
  int error = 0;  // kReportError: the positive fi_errno
};

class MsgState {
 public:
  enum State {
    kIdle,             // enabled, not connecting
    kResolvingAddr,    // fi_connect: rdma_resolve_addr issued
    kResolvingRoute,   // rdma_resolve_route issued
    kConnecting,       // rdma_connect issued
    kAccepting,        // fi_accept: rdma_accept issued
    kConnected,
    kDisconnecting,    // fi_shutdown: rdma_disconnect issued
    kShutdown,         // disconnected (by either side)
    kFailed,           // connecting failed, or the peer rejected
  };

  State state() const { return state_; }

  // fi_connect (active side): 0, or -FI_EOPBADSTATE unless idle.
  int Connect();
  // fi_accept on an endpoint opened for a connection request: 0, or
  // -FI_EOPBADSTATE unless idle.
  int Accept();
  // fi_shutdown: 0 (rdma_disconnect is to be issued), -FI_ENOTCONN when
  // not connected (nor accepting or connecting), and 0 without anything
  // to do when already shut down.
  int Shutdown();
  // Whether fi_shutdown's rdma_disconnect is to be issued now.
  bool ShutdownNeedsDisconnect() const { return disconnect_; }

  // The next action after `step` (the event of this endpoint's id).
  MsgAction OnStep(const CmStep& step);

  // Whether transmits may be posted: connected. Receives may be posted
  // from fi_enable on (the QP exists once connecting starts; the endpoint
  // keeps them until then).
  bool CanTransmit() const { return state_ == kConnected; }

 private:
  State state_ = kIdle;
  bool disconnect_ = false;
};

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_MSG_STATE_H_

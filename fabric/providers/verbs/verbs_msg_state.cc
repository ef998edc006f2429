#include "fabric/providers/verbs/verbs_msg_state.h"

#include <rdma/fi_errno.h>

namespace fabric {
namespace verbs {

int MsgState::Connect() {
  if (state_ != kIdle) return -FI_EOPBADSTATE;
  state_ = kResolvingAddr;
  return 0;
}

int MsgState::Accept() {
  if (state_ != kIdle) return -FI_EOPBADSTATE;
  state_ = kAccepting;
  return 0;
}

int MsgState::Shutdown() {
  disconnect_ = false;
  switch (state_) {
    case kShutdown:
    case kDisconnecting:
      return 0;
    case kConnected:
    case kAccepting:
    case kConnecting:
      state_ = kDisconnecting;
      disconnect_ = true;
      return 0;
    default:
      return -FI_ENOTCONN;
  }
}

MsgAction MsgState::OnStep(const CmStep& step) {
  MsgAction action;
  switch (step.kind) {
    case CmStep::kResolveRoute:
      if (state_ != kResolvingAddr) return action;
      state_ = kResolvingRoute;
      action.kind = MsgAction::kResolveRoute;
      return action;
    case CmStep::kConnect:
      if (state_ != kResolvingRoute) return action;
      state_ = kConnecting;
      action.kind = MsgAction::kCreateQpAndConnect;
      return action;
    case CmStep::kConnected:
      if (state_ != kConnecting && state_ != kAccepting) return action;
      state_ = kConnected;
      action.kind = MsgAction::kReportConnected;
      return action;
    case CmStep::kShutdown:
      // The peer's disconnect, ours completing, or the device going away:
      // reported once, whatever the state had reached.
      if (state_ == kShutdown || state_ == kFailed || state_ == kIdle) {
        return action;
      }
      state_ = kShutdown;
      action.kind = MsgAction::kReportShutdown;
      return action;
    case CmStep::kError:
      if (state_ == kShutdown || state_ == kFailed || state_ == kIdle) {
        return action;
      }
      // A failure once connected (a QP error) ends the connection too.
      state_ = state_ == kConnected || state_ == kDisconnecting ? kShutdown
                                                                 : kFailed;
      action.kind = MsgAction::kReportError;
      action.error = step.error;
      return action;
    case CmStep::kConnReq:  // a listener's, never an endpoint's
    case CmStep::kIgnore:
      return action;
  }
  return action;
}

}  // namespace verbs
}  // namespace fabric

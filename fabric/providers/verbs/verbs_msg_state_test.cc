// The verbs MSG endpoint's connection states, driven by the rdma_cm events
// StepOf maps, checked without a device.
#include "fabric/providers/verbs/verbs_msg_state.h"

#include <rdma/fi_errno.h>

#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

MsgAction::Kind On(MsgState& state, rdma_cm_event_type event,
                   int status = 0) {
  return state.OnStep(StepOf(event, status)).kind;
}

TEST(VerbsMsgStateTest, AnActiveConnectResolvesThenConnects) {
  MsgState state;
  EXPECT_FALSE(state.CanTransmit());
  ASSERT_EQ(state.Connect(), 0);
  EXPECT_EQ(state.Connect(), -FI_EOPBADSTATE);  // once
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ADDR_RESOLVED),
            MsgAction::kResolveRoute);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ROUTE_RESOLVED),
            MsgAction::kCreateQpAndConnect);
  EXPECT_FALSE(state.CanTransmit());
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ESTABLISHED), MsgAction::kReportConnected);
  EXPECT_TRUE(state.CanTransmit());
  // A second ESTABLISHED (or a late resolution) changes nothing.
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ESTABLISHED), MsgAction::kNone);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ADDR_RESOLVED), MsgAction::kNone);
  EXPECT_EQ(state.state(), MsgState::kConnected);
}

TEST(VerbsMsgStateTest, OutOfOrderEventsDoNothing) {
  MsgState state;
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ROUTE_RESOLVED), MsgAction::kNone);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ESTABLISHED), MsgAction::kNone);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_DISCONNECTED), MsgAction::kNone);
  ASSERT_EQ(state.Connect(), 0);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ROUTE_RESOLVED), MsgAction::kNone);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ESTABLISHED), MsgAction::kNone);
  EXPECT_EQ(state.state(), MsgState::kResolvingAddr);
}

TEST(VerbsMsgStateTest, APassiveSideConnectsOnceEstablished) {
  MsgState state;
  ASSERT_EQ(state.Accept(), 0);
  EXPECT_EQ(state.Accept(), -FI_EOPBADSTATE);
  EXPECT_EQ(state.Connect(), -FI_EOPBADSTATE);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ESTABLISHED), MsgAction::kReportConnected);
  EXPECT_TRUE(state.CanTransmit());
}

TEST(VerbsMsgStateTest, FailuresAndRejectionsAreErrorsOnce) {
  MsgState state;
  ASSERT_EQ(state.Connect(), 0);
  MsgAction action = state.OnStep(StepOf(RDMA_CM_EVENT_ADDR_ERROR, -113));
  EXPECT_EQ(action.kind, MsgAction::kReportError);
  EXPECT_EQ(action.error, FI_EHOSTUNREACH);
  EXPECT_EQ(state.state(), MsgState::kFailed);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_ROUTE_ERROR, -113), MsgAction::kNone);
  EXPECT_EQ(state.Connect(), -FI_EOPBADSTATE);

  MsgState rejected;
  ASSERT_EQ(rejected.Connect(), 0);
  On(rejected, RDMA_CM_EVENT_ADDR_RESOLVED);
  On(rejected, RDMA_CM_EVENT_ROUTE_RESOLVED);
  action = rejected.OnStep(StepOf(RDMA_CM_EVENT_REJECTED, 28));
  EXPECT_EQ(action.kind, MsgAction::kReportError);
  EXPECT_EQ(action.error, FI_ECONNREFUSED);
  EXPECT_FALSE(rejected.CanTransmit());
}

TEST(VerbsMsgStateTest, ShutdownEitherWayIsReportedOnce) {
  MsgState state;
  EXPECT_EQ(state.Shutdown(), -FI_ENOTCONN);  // never connected
  ASSERT_EQ(state.Accept(), 0);
  On(state, RDMA_CM_EVENT_ESTABLISHED);
  ASSERT_EQ(state.Shutdown(), 0);
  EXPECT_TRUE(state.ShutdownNeedsDisconnect());
  EXPECT_FALSE(state.CanTransmit());
  ASSERT_EQ(state.Shutdown(), 0);  // again: nothing more to do
  EXPECT_FALSE(state.ShutdownNeedsDisconnect());
  EXPECT_EQ(On(state, RDMA_CM_EVENT_DISCONNECTED),
            MsgAction::kReportShutdown);
  EXPECT_EQ(On(state, RDMA_CM_EVENT_DISCONNECTED), MsgAction::kNone);
  EXPECT_EQ(state.state(), MsgState::kShutdown);

  // The peer disconnects first; the device can go away too.
  MsgState peer_first;
  ASSERT_EQ(peer_first.Accept(), 0);
  On(peer_first, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(On(peer_first, RDMA_CM_EVENT_DEVICE_REMOVAL),
            MsgAction::kReportShutdown);
  ASSERT_EQ(peer_first.Shutdown(), 0);
  EXPECT_FALSE(peer_first.ShutdownNeedsDisconnect());
}

TEST(VerbsMsgStateTest, AnErrorOnAConnectionEndsIt) {
  MsgState state;
  ASSERT_EQ(state.Accept(), 0);
  On(state, RDMA_CM_EVENT_ESTABLISHED);
  MsgAction action = state.OnStep(StepOf(RDMA_CM_EVENT_CONNECT_ERROR, -110));
  EXPECT_EQ(action.kind, MsgAction::kReportError);
  EXPECT_EQ(state.state(), MsgState::kShutdown);
  EXPECT_FALSE(state.CanTransmit());
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

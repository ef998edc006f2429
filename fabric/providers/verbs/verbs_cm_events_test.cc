// rdma_cm events to the RC endpoint's steps and EQ entries, without a
// device.
#include "fabric/providers/verbs/verbs_cm_events.h"

#include <errno.h>
#include <rdma/fi_errno.h>

#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

TEST(CmStepTest, AnActiveConnectResolvesThenConnects) {
  EXPECT_EQ(StepOf(RDMA_CM_EVENT_ADDR_RESOLVED, 0).kind,
            CmStep::kResolveRoute);
  EXPECT_EQ(StepOf(RDMA_CM_EVENT_ROUTE_RESOLVED, 0).kind, CmStep::kConnect);
  CmStep established = StepOf(RDMA_CM_EVENT_ESTABLISHED, 0);
  EXPECT_EQ(established.kind, CmStep::kConnected);
  EXPECT_TRUE(established.carries_data);  // the accept's fi_accept data
  EXPECT_EQ(StepOf(RDMA_CM_EVENT_CONNECT_RESPONSE, 0).kind,
            CmStep::kConnected);
}

TEST(CmStepTest, AListenerReportsRequestsWithTheirData) {
  CmStep request = StepOf(RDMA_CM_EVENT_CONNECT_REQUEST, 0);
  EXPECT_EQ(request.kind, CmStep::kConnReq);
  EXPECT_TRUE(request.carries_data);
}

TEST(CmStepTest, FailuresBecomeErrorEntries) {
  struct Case {
    rdma_cm_event_type event;
    int status;
    int error;
  };
  const Case cases[] = {
      // librdmacm's negative errno wins...
      {RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, FI_ENODEV},
      {RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT, FI_ETIMEDOUT},
      {RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET, FI_ECONNRESET},
      {RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, FI_ETIMEDOUT},
      {RDMA_CM_EVENT_ADDR_RESOLVED, -EADDRNOTAVAIL, FI_EADDRNOTAVAIL},
      {RDMA_CM_EVENT_ROUTE_RESOLVED, -ENETUNREACH, FI_ENETUNREACH},
      {RDMA_CM_EVENT_ESTABLISHED, -EPROTO, EPROTO},
      // ...else what the failed step means.
      {RDMA_CM_EVENT_ADDR_ERROR, 0, FI_EADDRNOTAVAIL},
      {RDMA_CM_EVENT_ROUTE_ERROR, 0, FI_EHOSTUNREACH},
      {RDMA_CM_EVENT_CONNECT_ERROR, 0, FI_ECONNREFUSED},
      {RDMA_CM_EVENT_UNREACHABLE, 0, FI_EHOSTUNREACH},
  };
  for (const Case& c : cases) {
    CmStep step = StepOf(c.event, c.status);
    EXPECT_EQ(step.kind, CmStep::kError) << static_cast<int>(c.event);
    EXPECT_EQ(step.error, c.error) << static_cast<int>(c.event);
    EXPECT_FALSE(step.carries_data) << static_cast<int>(c.event);
  }
}

// A rejection's status is the InfiniBand CM's reason (28: consumer
// reject), not an errno; only a consumer's rejection carries the peer's
// fi_reject data.
TEST(CmStepTest, ARejectionIsRefusedWithThePeersData) {
  for (int reason : {28, 8, 0}) {
    CmStep step = StepOf(RDMA_CM_EVENT_REJECTED, reason);
    EXPECT_EQ(step.kind, CmStep::kError);
    EXPECT_EQ(step.error, FI_ECONNREFUSED);
    EXPECT_EQ(step.carries_data, reason == kConsumerReject) << reason;
  }
}

TEST(CmStepTest, DisconnectsShutDownAndTheRestIsIgnored) {
  EXPECT_EQ(StepOf(RDMA_CM_EVENT_DISCONNECTED, 0).kind, CmStep::kShutdown);
  EXPECT_EQ(StepOf(RDMA_CM_EVENT_DEVICE_REMOVAL, 0).kind, CmStep::kShutdown);
  const int ignored[] = {RDMA_CM_EVENT_TIMEWAIT_EXIT, RDMA_CM_EVENT_ADDR_CHANGE,
                         RDMA_CM_EVENT_MULTICAST_JOIN,
                         RDMA_CM_EVENT_MULTICAST_ERROR, 1000};
  for (int event : ignored) {
    CmStep step = StepOf(event, 0);
    EXPECT_EQ(step.kind, CmStep::kIgnore) << event;
    EXPECT_FALSE(step.carries_data);
  }
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

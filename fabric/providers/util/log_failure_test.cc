// LogFailure: the negative fi_errno of the failure, and its warning (with
// the call's name when given) on the provider's log.
#include "fabric/providers/util/log_failure.h"

#include <rdma/fi_errno.h>

#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

fi_provider TestProvider() {
  fi_provider provider = {};
  provider.name = const_cast<char*>("log_failure_test");
  return provider;
}

TEST(LogFailureTest, ReturnsTheNegativeFiErrnoAndWarns) {
  fi_provider provider = TestProvider();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(LogFailure(&provider, FI_LOG_EP_CTRL,
                       FiError(FI_EINVAL, "a NULL buffer"), "fi_send"),
            -FI_EINVAL);
  EXPECT_EQ(LogFailure(&provider, FI_LOG_EP_DATA, FI_ENOTCONN,
                       "transmit before connect"),
            -FI_ENOTCONN);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("fi_send: a NULL buffer"), std::string::npos) << log;
  EXPECT_NE(log.find("transmit before connect"), std::string::npos) << log;
  EXPECT_NE(log.find("log_failure_test"), std::string::npos) << log;
  // The line names the caller, not LogFailure.
  EXPECT_NE(log.find("TestBody"), std::string::npos) << log;
  EXPECT_EQ(log.find("LogFailure"), std::string::npos) << log;
}

TEST(LogFailureTest, AStatusWithoutFiErrnoIsAnError) {
  fi_provider provider = TestProvider();
  EXPECT_LT(
      LogFailure(&provider, FI_LOG_CORE, absl::InternalError("no fi_errno")),
      0);
}

}  // namespace
}  // namespace fabric

// Cntr over tcp on lo: counting, and waits that succeed, time out or wake.
#include "fabric/api/cxx/cntr.h"

#include <rdma/fi_errno.h>

#include <chrono>
#include <thread>
#include <type_traits>
#include <utility>

#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Cntr> &&
                  std::is_nothrow_move_constructible_v<ofi::Cntr>,
              "ofi::Cntr is move-only");

class CntrTest : public ofi::testing::LoopbackTest {
 protected:
  // A counter that can be waited on.
  absl::StatusOr<ofi::Cntr> OpenWaitable() {
    fi_cntr_attr attr = {};
    attr.wait_obj = FI_WAIT_UNSPEC;
    return ofi::OpenCntr(lo_.domain, &attr);
  }
};

TEST_F(CntrTest, AddsAndSets) {
  absl::StatusOr<ofi::Cntr> cntr = ofi::OpenCntr(lo_.domain);
  ASSERT_TRUE(cntr.ok()) << cntr.status();
  EXPECT_EQ(cntr->Value(), 0u);
  EXPECT_TRUE(cntr->Add(2).ok());
  EXPECT_TRUE(cntr->Add(3).ok());
  EXPECT_EQ(cntr->Value(), 5u);
  EXPECT_TRUE(cntr->Set(1).ok());
  EXPECT_EQ(cntr->Value(), 1u);
  EXPECT_EQ(cntr->Errors(), 0u);
}

TEST_F(CntrTest, WaitReturnsAtTheThresholdOrTimesOut) {
  absl::StatusOr<ofi::Cntr> cntr = OpenWaitable();
  ASSERT_TRUE(cntr.ok()) << cntr.status();
  ASSERT_TRUE(cntr->Add(2).ok());
  EXPECT_TRUE(cntr->Wait(2, 0).ok());

  absl::Status timed_out = cntr->Wait(3, 10);
  EXPECT_EQ(ofi::FiErrno(timed_out), FI_ETIMEDOUT) << timed_out;
  EXPECT_EQ(timed_out.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(CntrTest, WaitWakesWhenAnotherThreadAdds) {
  absl::StatusOr<ofi::Cntr> cntr = OpenWaitable();
  ASSERT_TRUE(cntr.ok()) << cntr.status();
  std::thread adder([&cntr] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(cntr->Add(1).ok());
  });
  EXPECT_TRUE(cntr->Wait(1, 10000).ok());
  adder.join();
}

TEST_F(CntrTest, WaitOnTheDefaultsIsEinval) {
  absl::StatusOr<ofi::Cntr> cntr = ofi::OpenCntr(lo_.domain);  // FI_WAIT_NONE
  ASSERT_TRUE(cntr.ok()) << cntr.status();
  EXPECT_EQ(ofi::FiErrno(cntr->Wait(0, 0)), FI_EINVAL);
}

}  // namespace

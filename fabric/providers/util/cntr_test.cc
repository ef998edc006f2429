// The shared counter through the C API on a tcp domain.
#include "fabric/providers/util/cntr.h"

#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <thread>
#include <vector>

#include "fabric/fixtures/loopback_domain_test.h"
#include "gtest/gtest.h"

namespace {

class CntrTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void SetUp() override { OpenDomain(); }
  void TearDown() override {
    if (cntr_ != nullptr) {
      EXPECT_EQ(fi_close(&cntr_->fid), 0);
    }
    LoopbackDomainTest::TearDown();
  }

  int Open(fi_wait_obj wait) {
    fi_cntr_attr attr = {};
    attr.wait_obj = wait;
    return fi_cntr_open(domain_, &attr, &cntr_, &context_);
  }

  fid_cntr* cntr_ = nullptr;
  int context_ = 0;
};

TEST_F(CntrTest, CountsAndErrorCounts) {
  ASSERT_EQ(Open(FI_WAIT_NONE), 0);
  EXPECT_EQ(cntr_->fid.fclass, FI_CLASS_CNTR);
  EXPECT_EQ(cntr_->fid.context, &context_);
  EXPECT_EQ(fi_cntr_read(cntr_), 0u);
  EXPECT_EQ(fi_cntr_add(cntr_, 5), 0);
  fabric::CntrAdd(fabric::AsUtilCntr(&cntr_->fid), 2);
  EXPECT_EQ(fi_cntr_read(cntr_), 7u);
  EXPECT_EQ(fi_cntr_set(cntr_, 100), 0);
  EXPECT_EQ(fi_cntr_read(cntr_), 100u);
  EXPECT_EQ(fi_cntr_adderr(cntr_, 3), 0);
  fabric::CntrAddError(fabric::AsUtilCntr(&cntr_->fid), 1);
  EXPECT_EQ(fi_cntr_readerr(cntr_), 4u);
  EXPECT_EQ(fi_cntr_seterr(cntr_, 0), 0);
  EXPECT_EQ(fi_cntr_readerr(cntr_), 0u);
  EXPECT_EQ(fi_cntr_read(cntr_), 100u);
  // FI_WAIT_NONE: the application said it would not block.
  EXPECT_EQ(fi_cntr_wait(cntr_, 1, 0), -FI_EINVAL);
}

TEST_F(CntrTest, WaitForThresholdTimeoutAndErrors) {
  ASSERT_EQ(Open(FI_WAIT_UNSPEC), 0);
  EXPECT_EQ(fi_cntr_wait(cntr_, 1, 10), -FI_ETIMEDOUT);
  std::thread adder([this] {
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      EXPECT_EQ(fi_cntr_add(cntr_, 1), 0);
    }
  });
  EXPECT_EQ(fi_cntr_wait(cntr_, 10, -1), 0);
  EXPECT_EQ(fi_cntr_read(cntr_), 10u);
  adder.join();
  std::thread failer([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(fi_cntr_adderr(cntr_, 1), 0);
  });
  EXPECT_EQ(fi_cntr_wait(cntr_, 1000, -1), -FI_EAVAIL);
  failer.join();
}

TEST_F(CntrTest, WaitFdAndTrywait) {
  ASSERT_EQ(Open(FI_WAIT_FD), 0);
  int fd = -1;
  ASSERT_EQ(fi_control(&cntr_->fid, FI_GETWAIT, &fd), 0);
  fid* objects[] = {&cntr_->fid};
  pollfd p = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  ASSERT_EQ(fi_cntr_add(cntr_, 1), 0);
  EXPECT_EQ(poll(&p, 1, 0), 1);
  EXPECT_EQ(fi_trywait(fabric_, objects, 1), 0);
  EXPECT_EQ(poll(&p, 1, 0), 0);
}

TEST_F(CntrTest, BadArgumentsAndLimits) {
  fi_cntr_attr attr = {};
  EXPECT_EQ(fi_cntr_open(domain_, &attr, nullptr, nullptr), -FI_EINVAL);
  attr.flags = 1;
  EXPECT_EQ(fi_cntr_open(domain_, &attr, &cntr_, nullptr), -FI_EBADFLAGS);
  attr = {};
  attr.events = static_cast<fi_cntr_events>(3);
  EXPECT_EQ(fi_cntr_open(domain_, &attr, &cntr_, nullptr), -FI_EINVAL);
  attr = {};
  attr.wait_obj = static_cast<fi_wait_obj>(42);
  EXPECT_EQ(fi_cntr_open(domain_, &attr, &cntr_, nullptr), -FI_EINVAL);
  EXPECT_EQ(cntr_, nullptr);

  // NULL attributes mean the defaults; the domain holds the counter.
  ASSERT_EQ(fi_cntr_open(domain_, nullptr, &cntr_, nullptr), 0);
  EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);

  std::vector<fid_cntr*> more;
  fid_cntr* cntr = nullptr;
  while (fi_cntr_open(domain_, nullptr, &cntr, nullptr) == 0) {
    more.push_back(cntr);
    ASSERT_LE(more.size(), info_->domain_attr->cntr_cnt);
  }
  EXPECT_EQ(more.size() + 1, info_->domain_attr->cntr_cnt);
  EXPECT_EQ(fi_cntr_open(domain_, nullptr, &cntr, nullptr), -FI_ENOSPC);
  for (fid_cntr* c : more) EXPECT_EQ(fi_close(&c->fid), 0);
}

}  // namespace

// Wait sets through the C API: EQs, CQs and counters opened with
// FI_WAIT_SET wake fi_wait on their set.
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <thread>

#include "fabric/fixtures/loopback_domain_test.h"
#include "fabric/providers/util/cq.h"
#include "gtest/gtest.h"

namespace {

class WaitSetTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenDomain());
    fi_wait_attr attr = {};
    attr.wait_obj = FI_WAIT_FD;
    ASSERT_EQ(fi_wait_open(fabric_, &attr, &set_), 0);
  }
  void TearDown() override {
    if (set_ != nullptr) {
      EXPECT_EQ(fi_close(&set_->fid), 0);
    }
    LoopbackDomainTest::TearDown();
  }

  fid_wait* set_ = nullptr;
};

// Where the application serializes the domain (FI_THREAD_DOMAIN, manual
// progress), a CQ counts its room with plain stores, unless it is in a
// wait set: fi_wait on the set progresses the domain from another thread.
class WaitSetSerializedTest : public fabric::fixtures::LoopbackDomainTest {};

TEST_F(WaitSetSerializedTest, ACqInAWaitSetKeepsItsLockedCounters) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain([](fi_info* hints) {
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  }));
  fi_wait_attr wait_attr = {};
  wait_attr.wait_obj = FI_WAIT_FD;
  fid_wait* set = nullptr;
  ASSERT_EQ(fi_wait_open(fabric_, &wait_attr, &set), 0);
  fi_cq_attr in_set = {};
  in_set.wait_obj = FI_WAIT_SET;
  in_set.wait_set = set;
  fi_cq_attr alone = {};
  alone.wait_obj = FI_WAIT_NONE;
  fid_cq* cqs[2] = {};
  ASSERT_EQ(fi_cq_open(domain_, &in_set, &cqs[0], nullptr), 0);
  ASSERT_EQ(fi_cq_open(domain_, &alone, &cqs[1], nullptr), 0);
  EXPECT_FALSE(fabric::CqSerialized(*fabric::FidCast<fabric::UtilCq>(cqs[0])));
  EXPECT_TRUE(fabric::CqSerialized(*fabric::FidCast<fabric::UtilCq>(cqs[1])));
  for (fid_cq* cq : cqs) EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&set->fid), 0);
}

TEST_F(WaitSetTest, MembersWakeTheSet) {
  fi_eq_attr eq_attr = {};
  eq_attr.flags = FI_WRITE;
  eq_attr.wait_obj = FI_WAIT_SET;
  eq_attr.wait_set = set_;
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(fabric_, &eq_attr, &eq, nullptr), 0);
  fi_cq_attr cq_attr = {};
  cq_attr.wait_obj = FI_WAIT_SET;
  cq_attr.wait_set = set_;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &cq, nullptr), 0);
  fi_cntr_attr cntr_attr = {};
  cntr_attr.wait_obj = FI_WAIT_SET;
  cntr_attr.wait_set = set_;
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(domain_, &cntr_attr, &cntr, nullptr), 0);
  EXPECT_EQ(fi_close(&set_->fid), -FI_EBUSY);

  int fd = -1;
  ASSERT_EQ(fi_control(&set_->fid, FI_GETWAIT, &fd), 0);
  pollfd p = {fd, POLLIN, 0};
  EXPECT_EQ(fi_wait(set_, 10), -FI_ETIMEDOUT);
  EXPECT_EQ(poll(&p, 1, 0), 0);

  fi_eq_entry entry = {};
  ASSERT_GT(fi_eq_write(eq, FI_NOTIFY, &entry, sizeof(entry), 0), 0);
  EXPECT_EQ(poll(&p, 1, 0), 1);
  EXPECT_EQ(fi_wait(set_, 0), 0);
  EXPECT_EQ(poll(&p, 1, 0), 0);
  EXPECT_EQ(fi_wait(set_, 0), -FI_ETIMEDOUT);  // re-armed

  std::thread poster([cq] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    fi_cq_tagged_entry completion = {};
    EXPECT_EQ(fabric::CqWrite(fabric::AsUtilCq(&cq->fid), completion), 0);
  });
  EXPECT_EQ(fi_wait(set_, -1), 0);
  poster.join();

  ASSERT_EQ(fi_cntr_add(cntr, 1), 0);
  EXPECT_EQ(fi_wait(set_, 0), 0);

  EXPECT_EQ(fi_close(&eq->fid), 0);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&cntr->fid), 0);
}

TEST_F(WaitSetTest, BadArgumentsAreRejected) {
  fi_wait_attr attr = {};
  fid_wait* set = nullptr;
  EXPECT_EQ(fi_wait_open(fabric_, nullptr, &set), -FI_EINVAL);
  attr.wait_obj = FI_WAIT_NONE;
  EXPECT_EQ(fi_wait_open(fabric_, &attr, &set), -FI_EINVAL);
  attr.wait_obj = FI_WAIT_SET;
  EXPECT_EQ(fi_wait_open(fabric_, &attr, &set), -FI_EINVAL);
  attr.wait_obj = FI_WAIT_FD;
  attr.flags = 1;
  EXPECT_EQ(fi_wait_open(fabric_, &attr, &set), -FI_EBADFLAGS);

  // A member needs a wait set of its own fabric.
  fid_fabric* other = nullptr;
  ASSERT_EQ(fi_fabric(info_->fabric_attr, &other, nullptr), 0);
  fi_wait_attr other_attr = {};
  other_attr.wait_obj = FI_WAIT_UNSPEC;
  fid_wait* other_set = nullptr;
  ASSERT_EQ(fi_wait_open(other, &other_attr, &other_set), 0);
  fi_eq_attr eq_attr = {};
  eq_attr.wait_obj = FI_WAIT_SET;
  eq_attr.wait_set = other_set;
  fid_eq* eq = nullptr;
  EXPECT_EQ(fi_eq_open(fabric_, &eq_attr, &eq, nullptr), -FI_EINVAL);
  eq_attr.wait_set = reinterpret_cast<fid_wait*>(domain_);  // not a set
  EXPECT_EQ(fi_eq_open(fabric_, &eq_attr, &eq, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_close(&fabric_->fid), -FI_EBUSY);  // holds set_
  EXPECT_EQ(fi_close(&other_set->fid), 0);
  EXPECT_EQ(fi_close(&other->fid), 0);
}

}  // namespace

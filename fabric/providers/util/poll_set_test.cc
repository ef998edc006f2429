// Poll sets through the C API: fi_poll reports the contexts of CQs with
// entries and counters that changed.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "fabric/providers/util/cq.h"
#include "gtest/gtest.h"

namespace {

TEST(PollSetTest, ReportsMembersWithNews) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  fi_info* info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info),
            0);
  fi_freeinfo(hints);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);

  fid_poll* pollset = nullptr;
  fi_poll_attr poll_attr = {};
  ASSERT_EQ(fi_poll_open(domain, &poll_attr, &pollset), 0);
  int cq_context = 0, cntr_context = 0;
  fi_cq_attr cq_attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(domain, &cq_attr, &cq, &cq_context), 0);
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(domain, nullptr, &cntr, &cntr_context), 0);
  ASSERT_EQ(fi_poll_add(pollset, &cq->fid, 0), 0);
  ASSERT_EQ(fi_poll_add(pollset, &cntr->fid, 0), 0);
  EXPECT_EQ(fi_poll_add(pollset, &cq->fid, 0), -FI_EALREADY);
  EXPECT_EQ(fi_poll_add(pollset, &domain->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_close(&cq->fid), -FI_EBUSY);  // the set holds it

  void* contexts[4];
  EXPECT_EQ(fi_poll(pollset, contexts, 4), 0);
  fi_cq_tagged_entry completion = {};
  ASSERT_EQ(fabric::CqWrite(fabric::AsUtilCq(&cq->fid), completion), 0);
  ASSERT_EQ(fi_cntr_add(cntr, 2), 0);
  ASSERT_EQ(fi_poll(pollset, contexts, 4), 2);
  EXPECT_EQ(contexts[0], &cq_context);
  EXPECT_EQ(contexts[1], &cntr_context);
  // The CQ still holds its entry; the counter has not changed since.
  ASSERT_EQ(fi_poll(pollset, contexts, 4), 1);
  EXPECT_EQ(contexts[0], &cq_context);
  EXPECT_EQ(fi_poll(pollset, contexts, 0), 0);
  EXPECT_EQ(fi_poll(pollset, nullptr, 1), -FI_EINVAL);

  EXPECT_EQ(fi_poll_del(pollset, &cq->fid, 0), 0);
  EXPECT_EQ(fi_poll_del(pollset, &cq->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), -FI_EBUSY);
  EXPECT_EQ(fi_close(&pollset->fid), 0);  // releases the counter
  EXPECT_EQ(fi_close(&cntr->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
  fi_freeinfo(info);
}

}  // namespace

// fi_domain / fi_domain2 on the shared domain object, through the C API with
// the real tcp provider: opening from fi_getinfo results, the checks on the
// info given, parent/child reference counts, and fi_getinfo's rules for an
// opened domain (domain_attr->domain restricts and is referenced).
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "fabric/providers/util/domain.h"
#include "gtest/gtest.h"

namespace {

constexpr uint32_t kVersion = FI_VERSION(1, 18);

struct InfoFree {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using Info = std::unique_ptr<fi_info, InfoFree>;

// tcp MSG on the loopback interface.
Info LoopbackInfo() {
  Info hints(fi_allocinfo());
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  hints->ep_attr->type = FI_EP_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  fi_info* info = nullptr;
  EXPECT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, hints.get(), &info), 0);
  return Info(info);
}

class DomainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    info_ = LoopbackInfo();
    ASSERT_NE(info_, nullptr);
    ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
  }
  void TearDown() override {
    if (fabric_ != nullptr) {
      EXPECT_EQ(fi_close(&fabric_->fid), 0);
    }
  }

  Info info_;
  fid_fabric* fabric_ = nullptr;
};

TEST_F(DomainTest, OpensAndHoldsItsFabric) {
  fid_domain* domain = nullptr;
  int context = 0;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, &context), 0);
  EXPECT_EQ(domain->fid.fclass, FI_CLASS_DOMAIN);
  EXPECT_EQ(domain->fid.context, &context);
  EXPECT_EQ(fi_close(&fabric_->fid), -FI_EBUSY);

  fid_domain* second = nullptr;
  ASSERT_EQ(fi_domain2(fabric_, info_.get(), &second, 0, nullptr), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&fabric_->fid), -FI_EBUSY);
  EXPECT_EQ(fi_close(&second->fid), 0);
}

TEST_F(DomainTest, BindsOneEqOfItsFabric) {
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, nullptr), 0);
  fi_eq_attr attr = {};
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(fabric_, &attr, &eq, nullptr), 0);
  EXPECT_EQ(fi_domain_bind(domain, &fabric_->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_domain_bind(domain, &eq->fid, FI_SEND), -FI_EBADFLAGS);
  ASSERT_EQ(fi_domain_bind(domain, &eq->fid, FI_REG_MR), 0);
  EXPECT_EQ(fi_domain_bind(domain, &eq->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_close(&eq->fid), -FI_EBUSY);  // the domain uses it
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&eq->fid), 0);
}

ssize_t CountingCopyFrom(void*, size_t size, fi_hmem_iface, uint64_t,
                         const iovec*, size_t, uint64_t) {
  return static_cast<ssize_t>(size);
}
ssize_t CountingCopyTo(fi_hmem_iface, uint64_t, const iovec*, size_t,
                       uint64_t, const void*, size_t size) {
  return static_cast<ssize_t>(size);
}

TEST_F(DomainTest, HmemOverrideIsCheckedAndSetBeforeResources) {
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, nullptr), 0);
  fi_hmem_override_ops ops = {sizeof(ops), CountingCopyFrom, CountingCopyTo};
  EXPECT_EQ(fi_set_ops(&domain->fid, "no_such_ops", 0, &ops, nullptr),
            -FI_ENOSYS);
  EXPECT_EQ(fi_set_ops(&domain->fid, nullptr, 0, &ops, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 1, &ops,
                       nullptr),
            -FI_EBADFLAGS);
  EXPECT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, nullptr,
                       nullptr),
            -FI_EINVAL);
  fi_hmem_override_ops short_ops = ops;
  short_ops.size = sizeof(ops) - 1;
  EXPECT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &short_ops,
                       nullptr),
            -FI_EINVAL);
  fi_hmem_override_ops half = ops;
  half.copy_to_hmem_iov = nullptr;
  EXPECT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &half,
                       nullptr),
            -FI_EINVAL);
  ASSERT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &ops,
                       nullptr),
            0);
  // The domain's copies now go through the application's functions.
  char buffer[8];
  iovec iov = {buffer, sizeof(buffer)};
  EXPECT_EQ(fabric::FidCast<fabric::UtilDomain>(domain)->copier.CopyToIov(
                FI_HMEM_SYSTEM, 0, &iov, 1, 0, "abc", 3),
            3);
  // Once a resource exists the override can no longer change.
  fi_cq_attr cq_attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(domain, &cq_attr, &cq, nullptr), 0);
  EXPECT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &ops,
                       nullptr),
            -FI_EOPBADSTATE);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
}

TEST_F(DomainTest, EndpointsAndSharedContextsHoldTheDomain) {
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, nullptr), 0);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(domain, info_.get(), &ep, nullptr), 0);
  EXPECT_EQ(fi_close(&domain->fid), -FI_EBUSY);
  EXPECT_EQ(fi_close(&ep->fid), 0);
  fid_ep* other = nullptr;
  EXPECT_EQ(fi_scalable_ep(domain, info_.get(), &other, nullptr), -FI_ENOSYS);
  // tcp has shared receive and transmit contexts; they hold the domain.
  fid_ep* srx = nullptr;
  ASSERT_EQ(fi_srx_context(domain, info_->rx_attr, &srx, nullptr), 0);
  fid_stx* stx = nullptr;
  ASSERT_EQ(fi_stx_context(domain, info_->tx_attr, &stx, nullptr), 0);
  EXPECT_EQ(stx->fid.fclass, FI_CLASS_STX_CTX);
  fi_tx_attr too_large = *info_->tx_attr;
  ++too_large.size;
  fid_stx* refused = nullptr;
  EXPECT_EQ(fi_stx_context(domain, &too_large, &refused, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(refused, nullptr);
  EXPECT_EQ(fi_close(&domain->fid), -FI_EBUSY);
  EXPECT_EQ(fi_close(&srx->fid), 0);
  EXPECT_EQ(fi_close(&stx->fid), 0);
  // fi_query_atomic goes to the provider (tcp has atomics).
  fi_atomic_attr atomic = {};
  EXPECT_EQ(fi_query_atomic(domain, FI_UINT64, FI_SUM, &atomic, 0), 0);
  EXPECT_EQ(atomic.size, 8u);
  EXPECT_EQ(fi_close(&domain->fid), 0);
}

TEST_F(DomainTest, EpCntEndpointsAtMost) {
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, nullptr), 0);
  std::vector<fid_ep*> eps(info_->domain_attr->ep_cnt);
  for (fid_ep*& ep : eps) {
    ASSERT_EQ(fi_endpoint(domain, info_.get(), &ep, nullptr), 0);
  }
  fid_ep* one_more = nullptr;
  EXPECT_EQ(fi_endpoint(domain, info_.get(), &one_more, nullptr), -FI_ENOSPC);
  EXPECT_EQ(fi_close(&eps.back()->fid), 0);
  EXPECT_EQ(fi_endpoint(domain, info_.get(), &eps.back(), nullptr), 0);
  for (fid_ep* ep : eps) EXPECT_EQ(fi_close(&ep->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
}

TEST_F(DomainTest, BadArgumentsAreRejected) {
  fid_domain* domain = nullptr;
  EXPECT_EQ(fi_domain(fabric_, nullptr, &domain, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_domain(fabric_, info_.get(), nullptr, nullptr), -FI_EINVAL);
  // FI_PEER needs the peer API, which tcp does not offer (fi_domain(3)).
  EXPECT_EQ(fi_domain2(fabric_, info_.get(), &domain, FI_PEER, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_domain2(fabric_, info_.get(), &domain, 1ULL << 3, nullptr),
            -FI_EBADFLAGS);

  Info wrong(fi_dupinfo(info_.get()));
  free(wrong->domain_attr->name);
  wrong->domain_attr->name = nullptr;
  EXPECT_EQ(fi_domain(fabric_, wrong.get(), &domain, nullptr), -FI_EINVAL);
  wrong->domain_attr->name = strdup("no_such_if0");
  EXPECT_EQ(fi_domain(fabric_, wrong.get(), &domain, nullptr), -FI_ENODATA);

  Info other_fabric(fi_dupinfo(info_.get()));
  free(other_fabric->fabric_attr->name);
  other_fabric->fabric_attr->name = strdup("198.51.100.0/24");
  EXPECT_EQ(fi_domain(fabric_, other_fabric.get(), &domain, nullptr),
            -FI_EINVAL);

  // Attributes are checked as fi_getinfo checks hints.
  Info too_big(fi_dupinfo(info_.get()));
  too_big->tx_attr->size = size_t{1} << 40;
  EXPECT_EQ(fi_domain(fabric_, too_big.get(), &domain, nullptr), -FI_ENODATA);
  Info bad_enum(fi_dupinfo(info_.get()));
  bad_enum->domain_attr->threading = static_cast<fi_threading>(77);
  EXPECT_EQ(fi_domain(fabric_, bad_enum.get(), &domain, nullptr), -FI_EINVAL);
}

TEST_F(DomainTest, GetInfoRestrictsToAndReferencesAnOpenedDomain) {
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric_, info_.get(), &domain, nullptr), 0);

  Info hints(fi_allocinfo());
  hints->domain_attr->domain = domain;
  fi_info* list = nullptr;
  ASSERT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, hints.get(), &list), 0);
  for (fi_info* info = list; info != nullptr; info = info->next) {
    EXPECT_EQ(info->domain_attr->domain, domain);
    EXPECT_STREQ(info->domain_attr->name, "lo");
    EXPECT_STREQ(info->fabric_attr->prov_name, "tcp");
    EXPECT_EQ(info->fabric_attr->fabric, fabric_);
  }
  fi_freeinfo(list);

  // Without the hint, results for that domain point at it too, but not
  // results for lo on another fabric (::1/128).
  Info all_lo(fi_allocinfo());
  all_lo->fabric_attr->prov_name = strdup("tcp");
  all_lo->domain_attr->name = strdup("lo");
  list = nullptr;
  ASSERT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, all_lo.get(), &list), 0);
  int on_fabric = 0;
  for (fi_info* info = list; info != nullptr; info = info->next) {
    bool same_fabric = strcmp(info->fabric_attr->name,
                              info_->fabric_attr->name) == 0;
    on_fabric += same_fabric;
    EXPECT_EQ(info->domain_attr->domain, same_fabric ? domain : nullptr)
        << info->fabric_attr->name;
  }
  EXPECT_GT(on_fabric, 0);
  fi_freeinfo(list);

  // A closed domain is no longer a valid hint.
  EXPECT_EQ(fi_close(&domain->fid), 0);
  list = nullptr;
  EXPECT_EQ(fi_getinfo(kVersion, nullptr, nullptr, 0, hints.get(), &list),
            -FI_EINVAL);
  EXPECT_EQ(list, nullptr);
}

}  // namespace

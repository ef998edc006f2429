#include "fabric/providers/udp/udp_test_fixture.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <chrono>

namespace fabric {
namespace {

constexpr auto kWait = std::chrono::seconds(5);
constexpr auto kQuiet = std::chrono::milliseconds(50);

using Clock = std::chrono::steady_clock;

}  // namespace

void UdpLoopbackTest::OpenDomain(const std::function<void(fi_info*)>& adjust,
                                 const fi_hmem_override_ops* hmem) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("udp");
  hints->domain_attr->name = strdup("lo");
  hints->ep_attr->type = FI_EP_DGRAM;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->caps = FI_MSG;
  if (adjust) adjust(hints);
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints,
                      &loopback_.info);
  fi_freeinfo(hints);
  ASSERT_EQ(rc, 0) << fi_strerror(-rc);
  ASSERT_EQ(fi_fabric(loopback_.info->fabric_attr, &loopback_.fabric, nullptr),
            0);
  ASSERT_EQ(
      fi_domain(loopback_.fabric, loopback_.info, &loopback_.domain, nullptr),
      0);
  if (hmem != nullptr) {
    ASSERT_EQ(fi_set_ops(&loopback_.domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0,
                         const_cast<fi_hmem_override_ops*>(hmem), nullptr),
              0);
  }
  fi_av_attr av_attr = {};
  av_attr.type = FI_AV_TABLE;
  ASSERT_EQ(fi_av_open(loopback_.domain, &av_attr, &loopback_.av, nullptr), 0);
}

TestEndpoint& UdpLoopbackTest::OpenEndpoint(const EndpointOptions& options) {
  TestEndpoint& t = endpoints_.emplace_back();
  fid_ep* ep = nullptr;
  fi_info* info =
      const_cast<fi_info*>(options.info ? options.info : loopback_.info);
  int rc = fi_endpoint(loopback_.domain, info, &ep, nullptr);
  if (rc != 0) {
    ADD_FAILURE() << "fi_endpoint: " << fi_strerror(-rc);
    return t;
  }
  bool ok = true;
  if (options.cqs) {
    fi_cq_attr attr = {};
    attr.format = FI_CQ_FORMAT_TAGGED;
    attr.size = options.cq_size;
    ok &= fi_cq_open(loopback_.domain, &attr, &t.cq, nullptr) == 0;
    ok &= fi_cq_open(loopback_.domain, &attr, &t.rx_cq, nullptr) == 0;
    ok = ok && fi_ep_bind(ep, &t.cq->fid, options.tx_cq_flags) == 0 &&
         fi_ep_bind(ep, &t.rx_cq->fid, options.rx_cq_flags) == 0;
  }
  if (options.counters) {
    fi_cntr_attr attr = {};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = FI_WAIT_UNSPEC;
    ok &= fi_cntr_open(loopback_.domain, &attr, &t.tx_cntr, nullptr) == 0;
    ok &= fi_cntr_open(loopback_.domain, &attr, &t.rx_cntr, nullptr) == 0;
    ok = ok && fi_ep_bind(ep, &t.tx_cntr->fid, FI_SEND) == 0 &&
         fi_ep_bind(ep, &t.rx_cntr->fid, FI_RECV) == 0;
  }
  ok = ok && fi_ep_bind(ep, &loopback_.av->fid, 0) == 0 && fi_enable(ep) == 0;
  t.ep = ep;
  if (!ok) {
    ADD_FAILURE() << "the endpoint's objects did not open, bind or enable";
    CloseEndpoint(t);
    return t;
  }
  if (options.insert_in_av) t.addr = InsertName(ep);
  return t;
}

void UdpLoopbackTest::CloseEndpoint(TestEndpoint& t) {
  EXPECT_EQ(fixtures::CloseObjects(&t), 0);
  t.addr = FI_ADDR_NOTAVAIL;
}

fi_addr_t UdpLoopbackTest::InsertName(fid_ep* ep) {
  char name[128];
  size_t length = sizeof(name);
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_getname(&ep->fid, name, &length), 0);
  EXPECT_EQ(fi_av_insert(loopback_.av, name, 1, &addr, 0, nullptr), 1);
  return addr;
}

void UdpLoopbackTest::TearDown() {
  for (TestEndpoint& t : endpoints_) CloseEndpoint(t);
  EXPECT_EQ(fixtures::CloseObjects(&loopback_), 0);
}

::testing::AssertionResult ReadCompletion(fid_cq* cq, fi_cq_tagged_entry* entry,
                                          fi_addr_t* source) {
  auto deadline = Clock::now() + kWait;
  while (true) {
    ssize_t rc = source != nullptr ? fi_cq_readfrom(cq, entry, 1, source)
                                   : fi_cq_read(cq, entry, 1);
    if (rc == 1) return ::testing::AssertionSuccess();
    if (rc != -FI_EAGAIN) {
      return ::testing::AssertionFailure()
             << "fi_cq_read: " << rc << " (" << fi_strerror(-rc) << ")";
    }
    if (Clock::now() > deadline) {
      return ::testing::AssertionFailure() << "no completion within 5 s";
    }
  }
}

::testing::AssertionResult ReadError(fid_cq* cq, fi_cq_err_entry* error) {
  auto deadline = Clock::now() + kWait;
  fi_cq_tagged_entry entry;
  while (true) {
    ssize_t rc = fi_cq_read(cq, &entry, 1);
    if (rc == -FI_EAVAIL) break;
    if (rc != -FI_EAGAIN) {
      return ::testing::AssertionFailure() << "fi_cq_read: " << rc;
    }
    if (Clock::now() > deadline) {
      return ::testing::AssertionFailure() << "no error entry within 5 s";
    }
  }
  *error = {};
  ssize_t rc = fi_cq_readerr(cq, error, 0);
  if (rc != 1) return ::testing::AssertionFailure() << "fi_cq_readerr: " << rc;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult StaysEmpty(fid_cq* cq) {
  auto until = Clock::now() + kQuiet;
  fi_cq_tagged_entry entry;
  while (Clock::now() < until) {
    ssize_t rc = fi_cq_read(cq, &entry, 1);
    if (rc != -FI_EAGAIN) {
      return ::testing::AssertionFailure() << "fi_cq_read: " << rc;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<char> Pattern(size_t size, int seed) {
  std::vector<char> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] =
        static_cast<char>((i * 31 + static_cast<size_t>(seed) * 7) % 251);
  }
  return bytes;
}

}  // namespace fabric

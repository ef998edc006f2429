// File: fabric/providers/udp/udp_test_fixture.h
//
// What the udp endpoint tests share: the udp domain on "lo" (IPv4 unless a
// test's hints say otherwise) opened through the C API with one AV, enabled
// endpoints with their CQs and counters, and bounded waits for completions
// (each read also drives manual progress). TearDown closes everything the
// fixture opened, children first.
#ifndef FABRIC_PROVIDERS_UDP_UDP_TEST_FIXTURE_H_
#define FABRIC_PROVIDERS_UDP_UDP_TEST_FIXTURE_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <deque>
#include <functional>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace fabric {

// An endpoint with what EndpointOptions asked for: CQs (cq for transmits,
// rx_cq for receives; FI_CQ_FORMAT_TAGGED) and counters (tx_cntr for
// FI_SEND, rx_cntr for FI_RECV).
struct TestEndpoint : fixtures::Objects {
  fi_addr_t addr = FI_ADDR_NOTAVAIL;  // its name in the fixture's AV
};

struct EndpointOptions {
  bool cqs = true;
  bool counters = false;
  uint64_t tx_cq_flags = FI_TRANSMIT;
  uint64_t rx_cq_flags = FI_RECV;
  size_t cq_size = 0;  // 0: the domain's default
  bool insert_in_av = true;
  const fi_info* info = nullptr;  // fi_endpoint's; null: the fixture's
};

class UdpLoopbackTest : public ::testing::Test {
 protected:
  // fi_getinfo for udp on "lo" with FI_SOCKADDR_IN (`adjust` edits the
  // hints), fi_fabric, fi_domain, the HMEM override when `hmem` is given,
  // and an FI_AV_TABLE AV.
  void OpenDomain(const std::function<void(fi_info*)>& adjust = nullptr,
                  const fi_hmem_override_ops* hmem = nullptr);
  // An enabled endpoint with the objects `options` asks for; its
  // ep is null (and the test has failed) when something did not open.
  TestEndpoint& OpenEndpoint(const EndpointOptions& options = {});
  // Closes an endpoint the fixture opened (before its CQs and counters).
  void CloseEndpoint(TestEndpoint& endpoint);
  // fi_getname of `ep`, inserted into the AV.
  fi_addr_t InsertName(fid_ep* ep);
  void TearDown() override;

  fixtures::Objects loopback_;  // info, fabric, domain and AV
  std::deque<TestEndpoint> endpoints_;
};

// One completion from `cq` within a few seconds (and its source, when
// `source` is given: fi_cq_readfrom).
::testing::AssertionResult ReadCompletion(fid_cq* cq, fi_cq_tagged_entry* entry,
                                          fi_addr_t* source = nullptr);
// One error entry: fi_cq_read says -FI_EAVAIL, then fi_cq_readerr.
::testing::AssertionResult ReadError(fid_cq* cq, fi_cq_err_entry* error);
// fi_cq_read finds nothing for a while (progress runs meanwhile).
::testing::AssertionResult StaysEmpty(fid_cq* cq);

// fi_rx_size_left / fi_tx_size_left, which rdma/fi_endpoint.h marks
// deprecated, through the endpoint's ops table.
inline ssize_t RxSizeLeft(fid_ep* ep) { return ep->ops->rx_size_left(ep); }
inline ssize_t TxSizeLeft(fid_ep* ep) { return ep->ops->tx_size_left(ep); }

// `size` bytes that differ with `seed`.
std::vector<char> Pattern(size_t size, int seed);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_TEST_FIXTURE_H_

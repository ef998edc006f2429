// File: fabric/conformance/endpoint_pair.h
//
// The fixture of the conformance suite: two endpoints that talk to each
// other, on every provider and endpoint type this library offers, opened
// through the public C API on the fixture library (//fabric/fixtures: each
// side is a fixtures::Objects, closed by CloseObjects). A test asks for
// the capabilities it needs; a case that does not claim them (fi_getinfo
// answers -FI_ENODATA) is skipped, saying so.
//
//   class PeekTest : public ofi::conformance::PairTest {};
//   TEST_P(PeekTest, Sees) {
//     PairOptions options;
//     options.caps = FI_TAGGED | FI_REMOTE_CQ_DATA;  // what the test needs
//     OPEN_PAIR_OR_SKIP(options);
//     ASSERT_EQ(fi_tsend(a().ep, ..., a().peer, ...), 0);
//     absl::StatusOr<Completion> c = b().Wait();
//   }
//   INSTANTIATE_CONFORMANCE_SUITE(PeekTest);
//
// Side a() is the initiator, b() the target. RDM and DGRAM endpoints share
// one fabric, domain and AV (each inserted both names: a is fi_addr 0, b
// is 1); MSG endpoints are connected (b accepts a's request from a passive
// endpoint). Both sides' progress runs on the domain's one engine, so
// waiting on either side advances both.
#ifndef FABRIC_CONFORMANCE_ENDPOINT_PAIR_H_
#define FABRIC_CONFORMANCE_ENDPOINT_PAIR_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace ofi::conformance {

// One provider and endpoint type under test.
struct ProviderCase {
  const char* name;      // the test's parameter name: "tcp_rdm_local"
  const char* provider;  // fi_getinfo's prov_name
  fi_ep_type type;
  // FI_TCP_SHM during fi_enable: "0" (RDM over TCP sockets), "1" (peers on
  // this host through shm), or null (left alone).
  const char* tcp_shm;
  bool rxm;  // RDM endpoints over the provider's MSG endpoints (rxm_ep.h)
  // fi_getinfo's node: 127.0.0.1, or null where the provider's device
  // gives the address (verbs: the first active port's IP address).
  const char* node = "127.0.0.1";
  // The address format the case asks for (verbs datagrams: FI_ADDR_IB_UD).
  uint32_t addr_format = FI_SOCKADDR_IN;
};

// Prints the case's name (gtest's parameter output).
void PrintTo(const ProviderCase& c, std::ostream* out);

// Every case the suite runs: tcp MSG, tcp RDM over TCP, tcp RDM through
// the local path, shm RDM, rxm over tcp MSG, udp DGRAM, and verbs MSG, RDM
// and DGRAM (skipped without an RDMA device; //fabric/conformance:
// verbs_in_guest_test runs them on soft-RoCE).
const std::vector<ProviderCase>& AllCases();

// What a test needs of the pair.
struct PairOptions {
  uint64_t caps = FI_MSG;  // FI_SOURCE is added where the type allows it
  fi_resource_mgmt resource_mgmt = FI_RM_UNSPEC;
  size_t cq_size_a = 0;  // 0: the provider's default
  size_t cq_size_b = 0;
  // A region of this many bytes on b, registered for remote read and
  // write (b().region, b().mr), when non-zero.
  size_t region_size = 0;
  // Both endpoints bound to one shared receive (transmit) context of the
  // domain (rx_ctx_cnt / tx_ctx_cnt FI_SHARED_CONTEXT), before fi_enable.
  bool shared_rx = false;
  bool shared_tx = false;
  // Each side's counters (Side::counters), bound before fi_enable.
  bool counters = false;
  size_t shared_tx_size = 0;  // the STX's attr.size (0: the default)
  // This many more endpoints of the case's type opened and enabled in the
  // domain and left idle (passive endpoints listening, for MSG): with more
  // than a handful, the engine's passes find ready sources through epoll
  // (progress.h) instead of polling each one.
  size_t idle_endpoints = 0;
  // The endpoints' ep_attr->max_msg_size when it is below what fi_getinfo
  // offers (an application may ask fi_endpoint for less; verbs datagrams
  // offer less than some tests ask); 0: as offered.
  size_t max_msg_size = 0;
  // RDM and DGRAM: b is bound to an AV of its own that holds only b's name
  // until the test calls EndpointPair::InsertAAtB (a's messages arrive from
  // an address b does not know yet). a's AV holds both names as usual.
  bool b_learns_a_late = false;
  // The domain's threading model (FI_THREAD_UNSPEC: the provider's
  // default, FI_THREAD_SAFE).
  fi_threading threading = FI_THREAD_UNSPEC;
};

// A completion as fi_cq_readfrom reported it.
struct Completion {
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_NOTAVAIL;
};

// One side: its CQ (both directions) and endpoint; on MSG its EQ (and
// b's passive endpoint); b's own AV with PairOptions::b_learns_a_late;
// b's region's MR.
struct Side : fabric::fixtures::Objects {
  fi_addr_t peer = FI_ADDR_UNSPEC;  // the other side (FI_ADDR_UNSPEC on MSG)
  fi_addr_t self = FI_ADDR_UNSPEC;  // this side in the shared AV
  std::vector<char> region;
  // With PairOptions::counters: one counter per fi_ep_bind flag, by
  // CntrKind order (FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
  // FI_REMOTE_WRITE).
  std::vector<fid_cntr*> counters;

  // fi_cq_readfrom of one completion, or the error entry (its err as the
  // status's fi_errno, the entry in *error when given), waiting up to
  // `timeout`.
  absl::StatusOr<Completion> Wait(
      std::chrono::milliseconds timeout = std::chrono::seconds(10),
      fi_cq_err_entry* error = nullptr);
  // fi_recvmsg of `size` bytes at `buf` with FI_MULTI_RECV: its return.
  ssize_t PostMultiRecv(void* buf, size_t size, void* context);
  // One read without waiting: nullopt when nothing is there.
  absl::StatusOr<std::optional<Completion>> Poll(
      fi_cq_err_entry* error = nullptr);
};

class EndpointPair {
 public:
  EndpointPair() = default;
  EndpointPair(const EndpointPair&) = delete;
  EndpointPair& operator=(const EndpointPair&) = delete;
  ~EndpointPair();

  // Opens both sides for `c`. NOT_FOUND when the case does not offer
  // `options.caps`; other errors name the call that failed.
  absl::Status Open(const ProviderCase& c, const PairOptions& options);
  // Closes the endpoints, then everything else, children first.
  absl::Status Close();

  Side& a() { return a_; }
  Side& b() { return b_; }
  const fi_info& info() const { return *shared_.info; }
  // The address an RMA from a names for b's region at `offset` (the
  // virtual address with FI_MR_VIRT_ADDR, else the offset).
  uint64_t RegionAddress(size_t offset) const;
  // Whether the type delivers every message (not FI_EP_DGRAM).
  bool Reliable() const { return case_->type != FI_EP_DGRAM; }
  // The AV both RDM and DGRAM sides use (null on MSG).
  fid_av* av() const { return shared_.av; }
  const ProviderCase& provider_case() const { return *case_; }
  // With PairOptions::b_learns_a_late: inserts a's name into b's AV and
  // sets b().peer to it.
  absl::Status InsertAAtB();
  // MSG (not rxm): the passive endpoint b accepted a's request on, which
  // goes on listening; its name lets another process connect.
  std::string ListenName() const { return listen_name_; }
  // MSG: one more endpoint, connected to the passive endpoint named
  // `name` (another process's ListenName), bound to a's CQ and EQ. The
  // caller closes it.
  absl::StatusOr<fid_ep*> ConnectOneMore(const std::string& name);
  // MSG: accepts the next connection request on b's EQ with one more
  // endpoint, bound to b's EQ and to `cq` (b's CQ when null);
  // `before_accept` runs on it first (to post receives). The caller closes
  // it.
  absl::StatusOr<fid_ep*> AcceptOneMore(
      const std::function<void(fid_ep*)>& before_accept,
      fid_cq* cq = nullptr);
  // The domain both sides opened on.
  fid_domain* domain() const { return shared_.domain; }
  // The shared contexts of PairOptions::shared_rx / shared_tx, or null.
  fid_ep* srx() const { return srx_; }
  fid_stx* stx() const { return stx_; }

 private:
  // Lowers info's ep_attr->max_msg_size to PairOptions::max_msg_size.
  void LowerMaxMsgSize(fi_info* info) const;
  // Opens side's CQ and endpoint on `info` (LowerMaxMsgSize), bound to
  // `av` when given, to side's EQ on MSG, and enables it.
  absl::Status OpenSide(Side* side, fi_info* info, size_t cq_size, fid_av* av);
  absl::Status BindCounters(Side* side);
  absl::Status OpenSharedContexts(const PairOptions& options);
  absl::Status Connect();
  absl::Status OpenIdleEndpoints(size_t count);
  // ConnectOneMore and AcceptOneMore: an endpoint on `info` bound to `eq`
  // and `cq`, enabled, `start`ed (fi_connect or fi_accept), once
  // FI_CONNECTED; closed on failure.
  absl::StatusOr<fid_ep*> OpenOneMore(fi_info* info, fid_eq* eq, fid_cq* cq,
                                      const std::function<int(fid_ep*)>& start);

  const ProviderCase* case_ = nullptr;
  // What both sides share: the case's info, fabric, domain and (RDM and
  // DGRAM) AV; the CQ of PairOptions::idle_endpoints.
  fabric::fixtures::Objects shared_;
  fi_info* msg_info_ = nullptr;  // rxm: the MSG endpoints' info
  std::vector<char> name_a_;     // a's fi_getname, for InsertAAtB
  std::string listen_name_;      // b.pep's fi_getname
  fid_ep* srx_ = nullptr;
  fid_stx* stx_ = nullptr;
  std::vector<fid*> idle_;  // PairOptions::idle_endpoints
  bool counters_ = false;
  size_t max_msg_size_ = 0;
  Side a_;
  Side b_;
};

// fi_getinfo's answer for case `c`, endpoint `type` (the case's own, or
// MSG under rxm) and `options` on the case's node (any port): NOT_FOUND
// when the case does not offer options.caps.
absl::StatusOr<fi_info*> CaseInfo(const ProviderCase& c, fi_ep_type type,
                                  const PairOptions& options);

// Whether `ep` (an endpoint or a shared receive context) cancels receives:
// fi_cancel of a context never posted is -FI_ENOENT there (checked), and
// -FI_ENOSYS where the provider cannot (verbs: a receive queue's entries
// cannot be taken back).
bool CancelsReceives(fid_ep* ep);

// A test over every case: the fixture's pair_, opened by OpenPair.
class PairTest : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void TearDown() override;
  // Opens pair_ for this test's case: OK, NOT_FOUND (skip), or an error.
  absl::Status OpenPair(const PairOptions& options);

  Side& a() { return pair_.a(); }
  Side& b() { return pair_.b(); }

  EndpointPair pair_;
};

// Opens the pair, skipping the test when the case lacks the capabilities.
#define OPEN_PAIR_OR_SKIP(options)                                    \
  do {                                                                \
    absl::Status opened_ = OpenPair(options);                         \
    if (absl::IsNotFound(opened_)) GTEST_SKIP() << opened_.message(); \
    ASSERT_TRUE(opened_.ok()) << opened_;                             \
  } while (0)

// Runs the test suite `suite` (a PairTest, or any test taking a
// ProviderCase parameter) once per case.
#define INSTANTIATE_CONFORMANCE_SUITE(suite)                          \
  INSTANTIATE_TEST_SUITE_P(                                           \
      AllProviders, suite,                                            \
      ::testing::ValuesIn(::ofi::conformance::AllCases()),            \
      [](const ::testing::TestParamInfo<::ofi::conformance::ProviderCase>& \
             info) { return std::string(info.param.name); })

}  // namespace ofi::conformance

#endif  // FABRIC_CONFORMANCE_ENDPOINT_PAIR_H_

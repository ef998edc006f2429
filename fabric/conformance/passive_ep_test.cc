// Passive endpoints of every connection-oriented provider (fi_endpoint(3),
// fi_cm(3)): fi_getopt(FI_OPT_CM_DATA_SIZE) says how much data a
// connection request carries, and a request with that much arrives whole;
// a passive endpoint opened without info->src_addr is named with
// fi_setname before fi_listen (or listens on the wildcard address).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

class PassiveEpTest : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void SetUp() override {
    const ProviderCase& c = GetParam();
    if (c.type != FI_EP_MSG) GTEST_SKIP() << "not connection-oriented";
    Info hints = AllocInfo();
    hints->fabric_attr->prov_name = strdup(c.provider);
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG;
    hints->addr_format = FI_SOCKADDR_IN;
    // No data moves here: any memory registration mode will do.
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    GetInfoOptions options;
    if (c.node != nullptr) {
      options.node = c.node;
      options.service = "0";
      options.flags = FI_SOURCE;
    }
    absl::StatusOr<Info> info = GetInfo(hints.get(), options);
    if (absl::IsNotFound(info.status())) GTEST_SKIP() << info.status();
    ASSERT_TRUE(info.ok()) << info.status();
    info_ = std::move(*info);
    // 127.0.0.1, or the device's address (verbs).
    host_ = reinterpret_cast<const sockaddr_in*>(info_->src_addr)->sin_addr;
    absl::StatusOr<Fabric> fabric = OpenFabric(*info_->fabric_attr);
    ASSERT_TRUE(fabric.ok()) << fabric.status();
    fabric_ = std::move(*fabric);
    absl::StatusOr<Domain> domain = OpenDomain(fabric_, *info_);
    ASSERT_TRUE(domain.ok()) << domain.status();
    domain_ = std::move(*domain);
    for (Eq* eq : {&server_eq_, &client_eq_}) {
      absl::StatusOr<Eq> opened = OpenEq(fabric_, fi_eq_attr{});
      ASSERT_TRUE(opened.ok()) << opened.status();
      *eq = std::move(*opened);
    }
    absl::StatusOr<Cq> cq = OpenCq(domain_, fi_cq_attr{});
    ASSERT_TRUE(cq.ok()) << cq.status();
    cq_ = std::move(*cq);
  }

  // An endpoint of `info` bound to `eq` and the CQ.
  fid_ep* OpenEndpoint(fi_info* info, Eq& eq) {
    fid_ep* ep = nullptr;
    EXPECT_EQ(fi_endpoint(domain_.get(), info, &ep, nullptr), 0);
    if (ep == nullptr) return nullptr;
    EXPECT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    EXPECT_EQ(fi_ep_bind(ep, &cq_->fid, FI_TRANSMIT | FI_RECV), 0);
    return ep;
  }

  void TearDown() override {
    for (fid_ep* ep : {client_, server_}) {
      if (ep != nullptr) {
        EXPECT_EQ(fi_close(&ep->fid), 0);
      }
    }
    if (pep_ != nullptr) {
      EXPECT_EQ(fi_close(&pep_->fid), 0);
    }
  }

  // A passive endpoint of info_ with src_addr removed.
  void OpenPepWithoutAddress() {
    Info info = DupInfo(*info_);
    free(info->src_addr);
    info->src_addr = nullptr;
    info->src_addrlen = 0;
    ASSERT_EQ(fi_passive_ep(fabric_.get(), info.get(), &pep_, nullptr), 0);
    ASSERT_EQ(fi_pep_bind(pep_, &server_eq_->fid, 0), 0);
  }

  // The next event of `eq` (waiting up to 10 s), its entry and data.
  uint32_t WaitEvent(Eq& eq, std::vector<uint8_t>* data) {
    Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      absl::StatusOr<std::optional<EqEvent>> event = eq.Read();
      if (!event.ok()) return 0;
      if (event->has_value()) {
        *data = (*event)->data;
        return (*event)->event;
      }
    }
    return 0;
  }

  // a connects to port `port` of the case's address with `cm_data`; the server
  // accepts; both see FI_CONNECTED. The request's data goes to *received.
  void ConnectTo(uint16_t port, const std::vector<char>& cm_data,
                 std::vector<char>* received) {
    sockaddr_in dest = {};
    dest.sin_family = AF_INET;
    dest.sin_port = htons(port);
    dest.sin_addr = host_;
    client_ = OpenEndpoint(info_.get(), client_eq_);
    ASSERT_NE(client_, nullptr);
    ASSERT_EQ(fi_connect(client_, &dest, cm_data.data(), cm_data.size()), 0);
    std::vector<uint8_t> event;
    ASSERT_EQ(WaitEvent(server_eq_, &event), FI_CONNREQ);
    fi_eq_cm_entry entry;
    ASSERT_GE(event.size(), sizeof(entry));
    memcpy(&entry, event.data(), sizeof(entry));
    received->assign(event.begin() + sizeof(entry), event.end());
    server_ = OpenEndpoint(entry.info, server_eq_);
    fi_freeinfo(entry.info);
    ASSERT_NE(server_, nullptr);
    ASSERT_EQ(fi_accept(server_, nullptr, 0), 0);
    EXPECT_EQ(WaitEvent(server_eq_, &event), FI_CONNECTED);
    EXPECT_EQ(WaitEvent(client_eq_, &event), FI_CONNECTED);
  }

  uint16_t ListeningPort() {
    sockaddr_in name = {};
    size_t len = sizeof(name);
    EXPECT_EQ(fi_getname(&pep_->fid, &name, &len), 0);
    return ntohs(name.sin_port);
  }

  Info info_;
  in_addr host_ = {};  // the address of info_->src_addr
  Fabric fabric_;
  Domain domain_;
  Eq server_eq_;
  Eq client_eq_;
  Cq cq_;
  fid_pep* pep_ = nullptr;
  fid_ep* client_ = nullptr;
  fid_ep* server_ = nullptr;
};

TEST_P(PassiveEpTest, CmDataSizeIsReadOnlyAndHoldsWhatItSays) {
  ASSERT_EQ(fi_passive_ep(fabric_.get(), info_.get(), &pep_, nullptr), 0);
  ASSERT_EQ(fi_pep_bind(pep_, &server_eq_->fid, 0), 0);
  size_t size = 0;
  size_t len = sizeof(size);
  ASSERT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size,
                      &len),
            0);
  EXPECT_EQ(len, sizeof(size_t));
  EXPECT_GT(size, 0u);
  size_t short_len = 4;
  EXPECT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size,
                      &short_len),
            -FI_ETOOSMALL);
  EXPECT_EQ(short_len, sizeof(size_t));
  EXPECT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      nullptr, &len),
            -FI_EINVAL);
  EXPECT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &size, &len),
            -FI_ENOPROTOOPT);
  EXPECT_EQ(fi_setopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &size,
                      sizeof(size)),
            -FI_ENOPROTOOPT);
  ASSERT_EQ(fi_listen(pep_), 0);
  std::vector<char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 3 + 1);
  std::vector<char> received;
  ConnectTo(ListeningPort(), data, &received);
  EXPECT_EQ(received, data);
  // One byte more is refused at once.
  fid_ep* extra = OpenEndpoint(info_.get(), client_eq_);
  ASSERT_NE(extra, nullptr);
  sockaddr_in dest = {};
  dest.sin_family = AF_INET;
  dest.sin_port = htons(ListeningPort());
  dest.sin_addr = host_;
  std::vector<char> too_much(size + 1);
  EXPECT_EQ(fi_connect(extra, &dest, too_much.data(), too_much.size()),
            -FI_EINVAL);
  EXPECT_EQ(fi_close(&extra->fid), 0);
}

TEST_P(PassiveEpTest, WithoutSrcAddrSetnameNamesItBeforeListen) {
  OpenPepWithoutAddress();
  if (HasFatalFailure()) return;
  sockaddr_in name = {};
  name.sin_family = AF_INET;
  name.sin_addr = host_;
  ASSERT_EQ(fi_setname(&pep_->fid, &name, sizeof(name)), 0);
  ASSERT_EQ(fi_listen(pep_), 0);
  sockaddr_in bound = {};
  size_t len = sizeof(bound);
  ASSERT_EQ(fi_getname(&pep_->fid, &bound, &len), 0);
  EXPECT_EQ(bound.sin_addr.s_addr, host_.s_addr);
  EXPECT_NE(bound.sin_port, 0);
  // Named once listening: too late.
  EXPECT_EQ(fi_setname(&pep_->fid, &name, sizeof(name)), -FI_EOPBADSTATE);
  std::vector<char> received;
  ConnectTo(ntohs(bound.sin_port), {'h', 'i'}, &received);
  EXPECT_EQ(received, (std::vector<char>{'h', 'i'}));
}

TEST_P(PassiveEpTest, WithoutSrcAddrItListensOnTheWildcardAddress) {
  OpenPepWithoutAddress();
  if (HasFatalFailure()) return;
  ASSERT_EQ(fi_listen(pep_), 0);
  sockaddr_in bound = {};
  size_t len = sizeof(bound);
  ASSERT_EQ(fi_getname(&pep_->fid, &bound, &len), 0);
  EXPECT_EQ(bound.sin_addr.s_addr, htonl(INADDR_ANY));
  std::vector<char> received;
  ConnectTo(ntohs(bound.sin_port), {}, &received);
  EXPECT_TRUE(received.empty());
}

INSTANTIATE_CONFORMANCE_SUITE(PassiveEpTest);

}  // namespace
}  // namespace ofi::conformance

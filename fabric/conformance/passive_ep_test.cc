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
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

using fabric::fixtures::CmEntryOf;

class PassiveEpTest : public ::testing::TestWithParam<ProviderCase> {
 protected:
  void SetUp() override {
    const ProviderCase& c = GetParam();
    if (c.type != FI_EP_MSG) GTEST_SKIP() << "not connection-oriented";
    absl::StatusOr<fi_info*> info = CaseInfo(c, FI_EP_MSG, PairOptions());
    if (absl::IsNotFound(info.status())) GTEST_SKIP() << info.status();
    ASSERT_TRUE(info.ok()) << info.status();
    server_.info = *info;
    // 127.0.0.1, or the device's address (verbs).
    host_ =
        reinterpret_cast<const sockaddr_in*>(server_.info->src_addr)->sin_addr;
    ASSERT_EQ(fi_fabric(server_.info->fabric_attr, &server_.fabric, nullptr),
              0);
    ASSERT_EQ(fi_domain(server_.fabric, server_.info, &server_.domain, nullptr),
              0);
    fi_eq_attr eq_attr = {};
    ASSERT_EQ(fi_eq_open(server_.fabric, &eq_attr, &server_.eq, nullptr), 0);
    ASSERT_EQ(fi_eq_open(server_.fabric, &eq_attr, &client_.eq, nullptr), 0);
    fi_cq_attr cq_attr = {};
    ASSERT_EQ(fi_cq_open(server_.domain, &cq_attr, &server_.cq, nullptr), 0);
  }

  // An endpoint of `info` bound to `eq` and the CQ.
  fid_ep* OpenEndpoint(fi_info* info, fid_eq* eq) {
    fid_ep* ep = nullptr;
    EXPECT_EQ(fi_endpoint(server_.domain, info, &ep, nullptr), 0);
    if (ep == nullptr) return nullptr;
    EXPECT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    EXPECT_EQ(fi_ep_bind(ep, &server_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    return ep;
  }

  // The client's objects close first: its endpoint is bound to the
  // server's CQ.
  void TearDown() override {
    EXPECT_EQ(fabric::fixtures::CloseObjects(&client_), 0);
    EXPECT_EQ(fabric::fixtures::CloseObjects(&server_), 0);
  }

  // A passive endpoint of the server's info with src_addr removed.
  void OpenPepWithoutAddress() {
    fi_info* info = fi_dupinfo(server_.info);
    ASSERT_NE(info, nullptr);
    free(info->src_addr);
    info->src_addr = nullptr;
    info->src_addrlen = 0;
    int rc = fi_passive_ep(server_.fabric, info, &server_.pep, nullptr);
    fi_freeinfo(info);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(fi_pep_bind(server_.pep, &server_.eq->fid, 0), 0);
  }

  // The next event of `eq` (waiting up to 10 s), its bytes in *data.
  uint32_t WaitEvent(fid_eq* eq, std::vector<char>* data) {
    uint32_t event = 0;
    ssize_t rc = fabric::fixtures::WaitForEvent(eq, &event, data, nullptr,
                                                std::chrono::seconds(10));
    EXPECT_GT(rc, 0) << fi_strerror(static_cast<int>(-rc));
    return rc > 0 ? event : 0;
  }

  // The client connects to port `port` of the case's address with
  // `cm_data`; the server accepts; both see FI_CONNECTED. The request's
  // data goes to *received.
  void ConnectTo(uint16_t port, const std::vector<char>& cm_data,
                 std::vector<char>* received) {
    sockaddr_in dest = {};
    dest.sin_family = AF_INET;
    dest.sin_port = htons(port);
    dest.sin_addr = host_;
    client_.ep = OpenEndpoint(server_.info, client_.eq);
    ASSERT_NE(client_.ep, nullptr);
    ASSERT_EQ(fi_connect(client_.ep, &dest, cm_data.data(), cm_data.size()), 0);
    std::vector<char> event;
    ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNREQ);
    fi_eq_cm_entry entry = CmEntryOf(event);
    ASSERT_GE(event.size(), sizeof(entry));
    received->assign(event.begin() + sizeof(entry), event.end());
    server_.ep = OpenEndpoint(entry.info, server_.eq);
    fi_freeinfo(entry.info);
    ASSERT_NE(server_.ep, nullptr);
    ASSERT_EQ(fi_accept(server_.ep, nullptr, 0), 0);
    EXPECT_EQ(WaitEvent(server_.eq, &event), FI_CONNECTED);
    EXPECT_EQ(WaitEvent(client_.eq, &event), FI_CONNECTED);
  }

  uint16_t ListeningPort() {
    sockaddr_in name = {};
    size_t len = sizeof(name);
    EXPECT_EQ(fi_getname(&server_.pep->fid, &name, &len), 0);
    return ntohs(name.sin_port);
  }

  // The server's info, fabric, domain, EQ, the CQ of both endpoints, its
  // passive endpoint and the endpoint it accepts with; the client's EQ and
  // endpoint.
  fabric::fixtures::Objects server_;
  fabric::fixtures::Objects client_;
  in_addr host_ = {};  // the address of server_.info->src_addr
};

TEST_P(PassiveEpTest, CmDataSizeIsReadOnlyAndHoldsWhatItSays) {
  ASSERT_EQ(fi_passive_ep(server_.fabric, server_.info, &server_.pep, nullptr),
            0);
  ASSERT_EQ(fi_pep_bind(server_.pep, &server_.eq->fid, 0), 0);
  size_t size = 0;
  size_t len = sizeof(size);
  ASSERT_EQ(fi_getopt(&server_.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      &size, &len),
            0);
  EXPECT_EQ(len, sizeof(size_t));
  EXPECT_GT(size, 0u);
  size_t short_len = 4;
  EXPECT_EQ(fi_getopt(&server_.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      &size, &short_len),
            -FI_ETOOSMALL);
  EXPECT_EQ(short_len, sizeof(size_t));
  EXPECT_EQ(fi_getopt(&server_.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      nullptr, &len),
            -FI_EINVAL);
  EXPECT_EQ(fi_getopt(&server_.pep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &size, &len),
            -FI_ENOPROTOOPT);
  EXPECT_EQ(fi_setopt(&server_.pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      &size, sizeof(size)),
            -FI_ENOPROTOOPT);
  ASSERT_EQ(fi_listen(server_.pep), 0);
  std::vector<char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 3 + 1);
  std::vector<char> received;
  ConnectTo(ListeningPort(), data, &received);
  EXPECT_EQ(received, data);
  // One byte more is refused at once.
  fid_ep* extra = OpenEndpoint(server_.info, client_.eq);
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
  ASSERT_EQ(fi_setname(&server_.pep->fid, &name, sizeof(name)), 0);
  ASSERT_EQ(fi_listen(server_.pep), 0);
  sockaddr_in bound = {};
  size_t len = sizeof(bound);
  ASSERT_EQ(fi_getname(&server_.pep->fid, &bound, &len), 0);
  EXPECT_EQ(bound.sin_addr.s_addr, host_.s_addr);
  EXPECT_NE(bound.sin_port, 0);
  // Named once listening: too late.
  EXPECT_EQ(fi_setname(&server_.pep->fid, &name, sizeof(name)),
            -FI_EOPBADSTATE);
  std::vector<char> received;
  ConnectTo(ntohs(bound.sin_port), {'h', 'i'}, &received);
  EXPECT_EQ(received, (std::vector<char>{'h', 'i'}));
}

TEST_P(PassiveEpTest, WithoutSrcAddrItListensOnTheWildcardAddress) {
  OpenPepWithoutAddress();
  if (HasFatalFailure()) return;
  ASSERT_EQ(fi_listen(server_.pep), 0);
  sockaddr_in bound = {};
  size_t len = sizeof(bound);
  ASSERT_EQ(fi_getname(&server_.pep->fid, &bound, &len), 0);
  EXPECT_EQ(bound.sin_addr.s_addr, htonl(INADDR_ANY));
  std::vector<char> received;
  ConnectTo(ntohs(bound.sin_port), {}, &received);
  EXPECT_TRUE(received.empty());
}

INSTANTIATE_CONFORMANCE_SUITE(PassiveEpTest);

}  // namespace
}  // namespace ofi::conformance

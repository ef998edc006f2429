// Endpoint over tcp RDM on lo: opened, bound, enabled and named through the
// handle; a message between two endpoints with the C calls on get(); calls
// refused keep their fi_errno.
#include "fabric/api/cxx/endpoint.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include <chrono>
#include <string>
#include <thread>
#include <type_traits>

#include "fabric/api/cxx/av.h"
#include "fabric/api/cxx/cq.h"
#include "fabric/fixtures/cxx_loopback.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Endpoint> &&
                  std::is_nothrow_move_constructible_v<ofi::Endpoint>,
              "ofi::Endpoint is move-only");

// An RDM endpoint with its own CQ, on the loopback domain's AV.
struct Side {
  ofi::Cq cq;
  ofi::Endpoint ep;  // after its CQ: closed first
};

absl::StatusOr<Side> OpenSide(const ofi::testing::Loopback& lo,
                              const ofi::Av& av) {
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo.domain, cq_attr);
  if (!cq.ok()) return cq.status();
  absl::StatusOr<ofi::Endpoint> ep = ofi::OpenEnabledEndpoint(
      lo.domain, *lo.info,
      {{&av.get()->fid, 0}, {&cq->get()->fid, FI_TRANSMIT | FI_RECV}});
  if (!ep.ok()) return ep.status();
  return Side{*std::move(cq), *std::move(ep)};
}

// Reads one completion from `cq` within 5 s.
absl::StatusOr<fi_cq_msg_entry> WaitOne(ofi::Cq& cq) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  fi_cq_msg_entry entry = {};
  while (std::chrono::steady_clock::now() < deadline) {
    absl::StatusOr<size_t> n = cq.Read(absl::MakeSpan(&entry, 1));
    if (!n.ok()) return n.status();
    if (*n == 1) return entry;
    std::this_thread::yield();
  }
  return absl::DeadlineExceededError("no completion in 5 s");
}

TEST(EndpointTest, TwoRdmEndpointsExchangeAMessage) {
  absl::StatusOr<ofi::testing::Loopback> lo =
      ofi::testing::OpenLoopback(0, FI_EP_RDM);
  ASSERT_TRUE(lo.ok()) << lo.status();
  fi_av_attr av_attr = {};
  av_attr.type = FI_AV_TABLE;
  absl::StatusOr<ofi::Av> av = ofi::OpenAv(lo->domain, av_attr);
  ASSERT_TRUE(av.ok()) << av.status();
  absl::StatusOr<Side> a = OpenSide(*lo, *av);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Side> b = OpenSide(*lo, *av);
  ASSERT_TRUE(b.ok()) << b.status();

  absl::StatusOr<std::vector<char>> name = ofi::GetName(b->ep);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->size(), lo->info->src_addrlen);
  absl::StatusOr<std::vector<fi_addr_t>> peer = av->Insert(name->data(), 1);
  ASSERT_TRUE(peer.ok()) << peer.status();

  char in[16] = {};
  int rx_context = 0, tx_context = 0;
  ASSERT_EQ(fi_recv(b->ep.get(), in, sizeof(in), nullptr, FI_ADDR_UNSPEC,
                    &rx_context),
            0);
  const char out[] = "through ofi::";
  ASSERT_EQ(
      fi_send(a->ep.get(), out, sizeof(out), nullptr, (*peer)[0], &tx_context),
      0);
  absl::StatusOr<fi_cq_msg_entry> sent = WaitOne(a->cq);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->op_context, &tx_context);
  absl::StatusOr<fi_cq_msg_entry> received = WaitOne(b->cq);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_EQ(received->op_context, &rx_context);
  EXPECT_EQ(received->len, sizeof(out));
  EXPECT_STREQ(in, out);
}

TEST(EndpointTest, RefusedCallsKeepTheirFiErrno) {
  absl::StatusOr<ofi::testing::Loopback> lo =
      ofi::testing::OpenLoopback(0, FI_EP_RDM);
  ASSERT_TRUE(lo.ok()) << lo.status();
  absl::StatusOr<ofi::Endpoint> ep = ofi::OpenEndpoint(lo->domain, *lo->info);
  ASSERT_TRUE(ep.ok()) << ep.status();
  // An RDM endpoint without an AV or CQs cannot be enabled.
  EXPECT_NE(ofi::FiErrno(ofi::Enable(*ep)), 0);
  // Binding the endpoint's own domain is not a bind fi_ep_bind takes.
  EXPECT_EQ(ofi::FiErrno(ofi::Bind(*ep, &lo->domain.get()->fid, 0)), FI_EINVAL);
  // OpenEnabledEndpoint stops at the first refused bind.
  fi_cq_attr cq_attr = {};
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo->domain, cq_attr);
  ASSERT_TRUE(cq.ok()) << cq.status();
  absl::StatusOr<ofi::Endpoint> refused = ofi::OpenEnabledEndpoint(
      lo->domain, *lo->info,
      {{&lo->domain.get()->fid, 0}, {&cq->get()->fid, FI_TRANSMIT | FI_RECV}});
  EXPECT_EQ(ofi::FiErrno(refused.status()), FI_EINVAL);
  EXPECT_NE(refused.status().message().find("fi_ep_bind"), std::string::npos)
      << refused.status();
  // An info of another endpoint type than the domain's is refused.
  ofi::Info other = ofi::DupInfo(*lo->info);
  other->ep_attr->type = static_cast<fi_ep_type>(99);
  EXPECT_EQ(ofi::FiErrno(ofi::OpenEndpoint(lo->domain, *other).status()),
            FI_EINVAL);
}

}  // namespace

// Every byte a udp endpoint moves between the application's buffers and its
// own goes through the domain's copier: with an FI_SET_OPS_HMEM_OVERRIDE
// installed, the application's functions see each piece of each send and
// receive.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <string.h>

#include <vector>

#include "fabric/hmem/counting_override_testing.h"
#include "fabric/providers/udp/udp_test_fixture.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using Counts = CountingOverride;

class UdpHmemTest : public UdpLoopbackTest {
 protected:
  void SetUp() override {
    Counts::Reset();
    fi_hmem_override_ops ops = Counts::Ops();
    ASSERT_NO_FATAL_FAILURE(OpenDomain(nullptr, &ops));
  }
};

TEST_F(UdpHmemTest, OverrideSeesEveryPieceOfSendsAndReceives) {
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  std::vector<char> message = Pattern(1000, 9);
  iovec out[3] = {{message.data(), 200},
                  {message.data() + 200, 300},
                  {message.data() + 500, 500}};
  std::vector<char> first(600);
  std::vector<char> second(600);
  iovec in[2] = {{first.data(), first.size()}, {second.data(), second.size()}};
  ASSERT_EQ(fi_recvv(b.ep, in, nullptr, 2, 0, nullptr), 0);
  ASSERT_EQ(fi_sendv(a.ep, out, nullptr, 3, b.addr, nullptr), 0);
  EXPECT_EQ(Counts::from_calls.load(), 3);
  EXPECT_EQ(Counts::from_bytes.load(), 1000u);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_EQ(got.len, 1000u);
  EXPECT_EQ(Counts::to_calls.load(), 2);
  EXPECT_EQ(Counts::to_bytes.load(), 1000u);
  EXPECT_EQ(memcmp(first.data(), message.data(), 600), 0);
  EXPECT_EQ(memcmp(second.data(), message.data() + 600, 400), 0);

  // fi_inject and registered buffers go through it too.
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, first.data(), first.size(), FI_RECV, 0,
                      1, 0, &mr, nullptr),
            0);
  ASSERT_EQ(
      fi_recv(b.ep, first.data(), first.size(), fi_mr_desc(mr), 0, nullptr), 0);
  ASSERT_EQ(fi_inject(a.ep, "injected", 9, b.addr), 0);
  EXPECT_EQ(Counts::from_calls.load(), 4);
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_EQ(Counts::to_calls.load(), 3);
  EXPECT_STREQ(first.data(), "injected");
  EXPECT_EQ(Counts::non_system.load(), 0);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

}  // namespace
}  // namespace fabric

// With FI_SET_OPS_HMEM_OVERRIDE installed, every byte a tcp MSG endpoint
// moves to or from the application's memory goes through the application's
// copy functions: sends, receives, RMA writes and reads at both ends.
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <vector>

#include "fabric/hmem/counting_override_testing.h"
#include "fabric/providers/tcp/msg_pair_test.h"

namespace fabric {
namespace {

using Counts = CountingOverride;

class TcpHmemTest : public MsgPairTest {
 protected:
  void SetUp() override {
    PairOptions options;
    options.prepare_domain = [](fid_domain* domain) {
      fi_hmem_override_ops ops = Counts::Ops();
      ASSERT_EQ(fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &ops,
                           nullptr),
                0);
    };
    Connect(options);
    Counts::Reset();
  }
};

TEST_F(TcpHmemTest, MessagesGoThroughTheOverride) {
  std::vector<char> out(300000, 'm'), in(300000);
  ASSERT_EQ(fi_recv(server_.ep, in.data(), in.size(), nullptr, 0, nullptr),
            0);
  ASSERT_EQ(fi_send(client_.ep, out.data(), out.size(), nullptr, 0, nullptr),
            0);
  WaitCompletion(client_.cq);
  WaitCompletion(server_.rx_cq);
  EXPECT_TRUE(in == out);
  EXPECT_EQ(Counts::from_bytes.load(), out.size());
  EXPECT_EQ(Counts::to_bytes.load(), out.size());
  // Tagged, through the unexpected-message buffer.
  ASSERT_EQ(fi_tinject(client_.ep, "tag", 4, 0, 9), 0);
  EXPECT_TRUE(StaysEmpty(server_.rx_cq, 20));
  ASSERT_EQ(fi_trecv(server_.ep, in.data(), in.size(), nullptr, 0, 9, 0,
                     nullptr),
            0);
  WaitCompletion(server_.rx_cq);
  EXPECT_EQ(Counts::from_bytes.load(), out.size() + 4);
  EXPECT_EQ(Counts::to_bytes.load(), out.size() + 4);
  // Small, into a posted receive (taken whole from the staging buffer).
  ASSERT_EQ(fi_recv(server_.ep, in.data(), 64, nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(client_.ep, out.data(), 64, nullptr, 0, nullptr), 0);
  WaitCompletion(client_.cq);
  WaitCompletion(server_.rx_cq);
  EXPECT_EQ(Counts::from_bytes.load(), out.size() + 4 + 64);
  EXPECT_EQ(Counts::to_bytes.load(), out.size() + 4 + 64);
}

TEST_F(TcpHmemTest, RmaGoesThroughTheOverrideAtBothEnds) {
  std::vector<char> target(100000, 0);
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(server_.domain, target.data(), target.size(),
                      FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, nullptr),
            0);
  uint64_t addr = reinterpret_cast<uint64_t>(target.data());
  std::vector<char> out(target.size(), 'r'), back(target.size());
  ASSERT_EQ(fi_write(client_.ep, out.data(), out.size(), nullptr, 0, addr,
                     fi_mr_key(mr), nullptr),
            0);
  WaitCompletion(client_.cq);
  ASSERT_EQ(fi_read(client_.ep, back.data(), back.size(), nullptr, 0, addr,
                    fi_mr_key(mr), nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_TRUE(back == out);
  // Write: client from, server to. Read: server from, client to.
  EXPECT_EQ(Counts::from_bytes.load(), 2 * out.size());
  EXPECT_EQ(Counts::to_bytes.load(), 2 * out.size());
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

}  // namespace
}  // namespace fabric

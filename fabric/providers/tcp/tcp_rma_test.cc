// RMA over tcp MSG endpoints: writes and reads checked at the target, and
// what manual and automatic progress mean for the target of an RMA.
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "fabric/providers/tcp/msg_pair_test.h"

namespace fabric {
namespace {

class TcpRmaTest : public MsgPairTest {
 protected:
  // Registers `buffer` on the server for remote access.
  fid_mr* Expose(std::vector<char>& buffer, uint64_t access) {
    fid_mr* mr = nullptr;
    EXPECT_EQ(fi_mr_reg(server_.domain, buffer.data(), buffer.size(), access,
                        0, 0, 0, &mr, nullptr),
              0);
    return mr;
  }
  uint64_t Addr(const std::vector<char>& buffer, size_t offset = 0) {
    return reinterpret_cast<uint64_t>(buffer.data() + offset);
  }
};

TEST_F(TcpRmaTest, WriteThenReadBack) {
  Connect();
  std::vector<char> target(1 << 20, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_WRITE | FI_REMOTE_READ);
  std::vector<char> out(target.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 7);
  int context;
  ASSERT_EQ(fi_write(client_.ep, out.data(), out.size(), nullptr, 0,
                     Addr(target), fi_mr_key(mr), &context),
            0);
  fi_cq_tagged_entry entry = WaitCompletion(client_.cq);
  EXPECT_EQ(entry.op_context, &context);
  EXPECT_EQ(entry.flags, FI_RMA | FI_WRITE);
  EXPECT_TRUE(out == target);
  EXPECT_EQ(fi_cntr_read(server_.rx_cntr), 1u);  // FI_REMOTE_WRITE

  std::vector<char> back(1000);
  ASSERT_EQ(fi_read(client_.ep, back.data(), back.size(), nullptr, 0,
                    Addr(target, 5000), fi_mr_key(mr), &context),
            0);
  entry = WaitCompletion(client_.cq);
  EXPECT_EQ(entry.flags, FI_RMA | FI_READ);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), out.begin() + 5000));
  EXPECT_EQ(fi_cntr_read(client_.tx_cntr), 2u);  // FI_WRITE, FI_READ
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpRmaTest, ScatteredRemoteBuffers) {
  Connect();
  std::vector<char> target(300, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_WRITE);
  std::vector<char> out(150, 'w');
  iovec iov = {out.data(), out.size()};
  fi_rma_iov rma[2] = {{Addr(target), 50, fi_mr_key(mr)},
                       {Addr(target, 200), 100, fi_mr_key(mr)}};
  fi_msg_rma msg = {&iov, nullptr, 1, 0, rma, 2, nullptr, 0};
  ASSERT_EQ(fi_writemsg(client_.ep, &msg, 0), 0);
  WaitCompletion(client_.cq);
  EXPECT_EQ(std::count(target.begin(), target.end(), 'w'), 150);
  EXPECT_EQ(target[50], 0);
  EXPECT_EQ(target[200], 'w');
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpRmaTest, WriteDataGivesTheTargetACompletion) {
  Connect();
  std::vector<char> target(8, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_WRITE);
  ASSERT_EQ(fi_writedata(client_.ep, "data", 4, nullptr, 0x5151, 0,
                         Addr(target), fi_mr_key(mr), nullptr),
            0);
  WaitCompletion(client_.cq);
  fi_cq_tagged_entry entry = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(entry.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(entry.data, 0x5151u);
  EXPECT_STREQ(target.data(), "data");
  ASSERT_EQ(fi_inject_write(client_.ep, "DA", 2, 0, Addr(target),
                            fi_mr_key(mr)),
            0);
  EXPECT_TRUE(StaysEmpty(client_.cq, 50));  // inject: no entry
  EXPECT_STREQ(target.data(), "DAta");
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

// fi_domain(3): an RMA the target refuses (unknown key, outside the
// region, access not granted) fails with a transmit error, and as a
// resource-management error it tears the connection down: the other
// outstanding operations fail, both sides get FI_SHUTDOWN.
enum class Refusal { kWrongKey, kOutOfBounds, kNoWriteAccess, kReadOutOfBounds };

class TcpRmaRefusalTest : public TcpRmaTest,
                          public ::testing::WithParamInterface<Refusal> {};

TEST_P(TcpRmaRefusalTest, RefusedAndTheConnectionTornDown) {
  Connect();
  std::vector<char> target(100, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_READ);  // no remote writes
  char buf[10] = "abcdefghi";
  char in[4];
  int pending_context;
  ASSERT_EQ(fi_recv(client_.ep, in, sizeof(in), nullptr, 0, &pending_context),
            0);
  int context;
  uint64_t key = fi_mr_key(mr);
  switch (GetParam()) {
    case Refusal::kWrongKey:
      ASSERT_EQ(fi_write(client_.ep, buf, 10, nullptr, 0, Addr(target),
                         key + 1, &context), 0);
      break;
    case Refusal::kOutOfBounds:
      ASSERT_EQ(fi_write(client_.ep, buf, 10, nullptr, 0, Addr(target, 95),
                         key, &context), 0);
      break;
    case Refusal::kNoWriteAccess:
      ASSERT_EQ(fi_write(client_.ep, buf, 10, nullptr, 0, Addr(target), key,
                         &context), 0);
      break;
    case Refusal::kReadOutOfBounds:
      ASSERT_EQ(fi_read(client_.ep, buf, 10, nullptr, 0, Addr(target, 95),
                        key, &context), 0);
      break;
  }
  fi_cq_err_entry error = WaitError(client_.cq);
  EXPECT_EQ(error.err, FI_EACCES);
  EXPECT_EQ(error.prov_errno, FI_EACCES);  // always err's positive value
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(std::count(target.begin(), target.end(), 0), 100);
  // The endpoint is disabled: its posted receive fails, both sides are told.
  error = WaitError(client_.rx_cq);
  EXPECT_EQ(error.op_context, &pending_context);
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.prov_errno, FI_ECANCELED);
  std::vector<char> event;
  EXPECT_EQ(WaitEvent(client_.eq, &event), FI_SHUTDOWN);
  EXPECT_EQ(WaitEvent(server_.eq, &event), FI_SHUTDOWN);
  EXPECT_EQ(fi_write(client_.ep, buf, 10, nullptr, 0, Addr(target), key,
                     nullptr),
            -FI_ENOTCONN);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, TcpRmaRefusalTest,
                         ::testing::Values(Refusal::kWrongKey,
                                           Refusal::kOutOfBounds,
                                           Refusal::kNoWriteAccess,
                                           Refusal::kReadOutOfBounds));

// fi_mr_bind(mr, cntr, FI_REMOTE_WRITE): the counter counts remote writes
// into that region.
TEST_F(TcpRmaTest, RegionCountersCountRemoteWrites) {
  Connect();
  std::vector<char> target(64, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_WRITE);
  fi_cntr_attr attr = {};
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(server_.domain, &attr, &cntr, nullptr), 0);
  ASSERT_EQ(fi_mr_bind(mr, &cntr->fid, FI_REMOTE_WRITE), 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(fi_write(client_.ep, "w", 1, nullptr, 0, Addr(target, i),
                       fi_mr_key(mr), nullptr),
              0);
    WaitCompletion(client_.cq);
  }
  EXPECT_EQ(fi_cntr_read(cntr), 3u);
  EXPECT_EQ(fi_close(&mr->fid), 0);
  EXPECT_EQ(fi_close(&cntr->fid), 0);
}

// A region's authorization key (fi_mr_attr, else the domain's) must be the
// key the endpoint's peers proved: a region registered with another key is
// refused like a wrong MR key.
TEST_F(TcpRmaTest, RegionsServeOnlyPeersWithTheirAuthorizationKey) {
  PairOptions options;
  options.server_key = options.client_key = "shared-key";
  Connect(options);
  std::vector<char> inherits(8, 0), same(8, 0), other(8, 0);
  fid_mr* inherits_mr = Expose(inherits, FI_REMOTE_WRITE);  // the domain's
  auto register_with_key = [&](std::vector<char>& buffer, std::string key) {
    iovec iov = {buffer.data(), buffer.size()};
    fi_mr_attr attr = {};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_REMOTE_WRITE;
    attr.auth_key = reinterpret_cast<uint8_t*>(key.data());
    attr.auth_key_size = key.size();
    fid_mr* mr = nullptr;
    EXPECT_EQ(fi_mr_regattr(server_.domain, &attr, 0, &mr), 0);
    return mr;
  };
  fid_mr* same_mr = register_with_key(same, "shared-key");
  fid_mr* other_mr = register_with_key(other, "another-key");
  ASSERT_NE(same_mr, nullptr);
  ASSERT_NE(other_mr, nullptr);
  for (auto [buffer, mr] : {std::pair{&inherits, inherits_mr},
                            std::pair{&same, same_mr}}) {
    ASSERT_EQ(fi_write(client_.ep, "ok", 3, nullptr, 0, Addr(*buffer),
                       fi_mr_key(mr), nullptr),
              0);
    WaitCompletion(client_.cq);
    EXPECT_STREQ(buffer->data(), "ok");
  }
  int context;
  ASSERT_EQ(fi_write(client_.ep, "no", 3, nullptr, 0, Addr(other),
                     fi_mr_key(other_mr), &context),
            0);
  fi_cq_err_entry error = WaitError(client_.cq);
  EXPECT_EQ(error.err, FI_EACCES);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(std::count(other.begin(), other.end(), 0), 8);
  for (fid_mr* mr : {inherits_mr, same_mr, other_mr}) {
    EXPECT_EQ(fi_close(&mr->fid), 0);
  }
}

// FI_MR_ENDPOINT: a region serves remote accesses only once bound to an
// endpoint and enabled, and only through that endpoint.
TEST_F(TcpRmaTest, EndpointRegionsNeedBindAndEnable) {
  PairOptions options;
  options.extra_mr_mode = FI_MR_ENDPOINT;
  Connect(options);
  ASSERT_NE(server_.info->domain_attr->mr_mode & FI_MR_ENDPOINT, 0);
  std::vector<char> target(8, 0);
  fid_mr* mr = Expose(target, FI_REMOTE_WRITE);
  EXPECT_EQ(fi_mr_enable(mr), -FI_EOPBADSTATE);  // no endpoint yet
  EXPECT_EQ(fi_mr_bind(mr, &server_.ep->fid, 1), -FI_EINVAL);  // flags
  ASSERT_EQ(fi_mr_bind(mr, &server_.ep->fid, 0), 0);
  EXPECT_EQ(fi_mr_bind(mr, &server_.ep->fid, 0), -FI_EINVAL);  // once
  ASSERT_EQ(fi_mr_enable(mr), 0);
  ASSERT_EQ(fi_write(client_.ep, "ep", 3, nullptr, 0, Addr(target),
                     fi_mr_key(mr), nullptr),
            0);
  WaitCompletion(client_.cq);
  EXPECT_STREQ(target.data(), "ep");
  // A second region, never enabled: refused.
  std::vector<char> other(8, 0);
  fid_mr* disabled = Expose(other, FI_REMOTE_WRITE);
  ASSERT_EQ(fi_write(client_.ep, "no", 3, nullptr, 0, Addr(other),
                     fi_mr_key(disabled), nullptr),
            0);
  EXPECT_EQ(WaitError(client_.cq).err, FI_EACCES);
  EXPECT_EQ(other[0], 0);
  EXPECT_EQ(fi_close(&disabled->fid), 0);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpRmaTest, BadRmaArguments) {
  Connect();
  char buf[8];
  fi_rma_iov rma[5] = {};
  iovec iov = {buf, 0};
  fi_msg_rma msg = {&iov, nullptr, 1, 0, rma, 5, nullptr, 0};
  EXPECT_EQ(fi_writemsg(client_.ep, &msg, 0), -FI_EINVAL);  // > rma_iov_limit
  msg.rma_iov_count = 0;
  EXPECT_EQ(fi_readmsg(client_.ep, &msg, 0), -FI_EINVAL);
  rma[0].len = 4;
  msg.rma_iov_count = 1;
  EXPECT_EQ(fi_writemsg(client_.ep, &msg, 0), -FI_EINVAL);  // 0 != 4 bytes
  EXPECT_EQ(fi_readmsg(client_.ep, nullptr, 0), -FI_EINVAL);
}

// A write completes only when the target has checked it, so the target's
// progress model shows in whether the write completes while the target
// makes no call at all.
class TcpProgressTest : public TcpRmaTest {
 protected:
  // Connects with the server in `progress` and writes "abc" to it.
  void StartWrite(fi_progress progress) {
    PairOptions options;
    options.server_progress = progress;
    Connect(options);
    target_.assign(4, 0);
    mr_ = Expose(target_, FI_REMOTE_WRITE);
    ASSERT_EQ(fi_write(client_.ep, "abc", 4, nullptr, 0, Addr(target_),
                       fi_mr_key(mr_), nullptr),
              0);
  }
  // Reads the client's CQ (only) for `ms`: the write's completion or
  // -FI_EAGAIN.
  ssize_t ClientOnly(int ms) {
    fi_cq_tagged_entry entry;
    ssize_t rc = -FI_EAGAIN;
    auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < until) {
      rc = fi_cq_read(client_.cq, &entry, 1);
    }
    return rc;
  }
  void TearDown() override {
    if (mr_ != nullptr) EXPECT_EQ(fi_close(&mr_->fid), 0);
    TcpRmaTest::TearDown();
  }

  std::vector<char> target_;
  fid_mr* mr_ = nullptr;
};

TEST_F(TcpProgressTest, ManualTargetAdvancesOnlyInItsOwnCalls) {
  StartWrite(FI_PROGRESS_MANUAL);
  EXPECT_EQ(ClientOnly(200), -FI_EAGAIN);
  EXPECT_EQ(target_[0], 0);
  // One read of the server's (empty) CQ places the data and answers.
  fi_cq_tagged_entry entry;
  EXPECT_EQ(fi_cq_read(server_.rx_cq, &entry, 1), -FI_EAGAIN);
  EXPECT_STREQ(target_.data(), "abc");
  WaitCompletion(client_.cq);
}

TEST_F(TcpProgressTest, AutoTargetAdvancesByItself) {
  StartWrite(FI_PROGRESS_AUTO);
  EXPECT_EQ(ClientOnly(5000), 1);
  EXPECT_STREQ(target_.data(), "abc");
}

}  // namespace
}  // namespace fabric

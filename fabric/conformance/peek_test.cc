// FI_PEEK, FI_CLAIM and FI_DISCARD (fi_tagged(3)) on every provider and
// endpoint type with tagged messages: a peek sees every message that has
// arrived (it runs progress first: a loop of peeks and error reads is all
// an application may do while it waits), and peek and claim completions
// report what the message carries: len, tag, FI_REMOTE_CQ_DATA with its
// data, and its source for fi_cq_readfrom.
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMessages = 5;
constexpr size_t kSize = 32;
constexpr uint64_t kTagBase = 0x700;
constexpr uint64_t kDataBase = 0x5150;

class PeekTest : public PairTest {
 protected:
  void SetUp() override {
    PairOptions options;
    options.caps = FI_TAGGED;
    OPEN_PAIR_OR_SKIP(options);
    if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
    rdm_ = pair_.info().ep_attr->type == FI_EP_RDM;
  }

  // a sends message n: tag kTagBase + n, data kDataBase + n, kSize bytes.
  void SendAll() {
    payloads_.assign(kMessages, std::vector<char>(kSize));
    for (size_t n = 0; n < kMessages; ++n) {
      memset(payloads_[n].data(), static_cast<int>('a' + n), kSize);
      ASSERT_EQ(fi_tsenddata(a().ep, payloads_[n].data(), kSize, nullptr,
                             kDataBase + n, a().peer, kTagBase + n,
                             &payloads_[n]),
                0);
    }
  }

  // fi_trecvmsg on b for tag kTagBase + n with `flags`, into `buf`.
  ssize_t Receive(size_t n, uint64_t flags, fi_context* context,
                  void* buf = nullptr, size_t len = 0) {
    iovec iov = {buf, len};
    fi_msg_tagged msg = {};
    msg.msg_iov = buf != nullptr ? &iov : nullptr;
    msg.iov_count = buf != nullptr ? 1 : 0;
    msg.addr = FI_ADDR_UNSPEC;
    msg.tag = kTagBase + n;
    msg.context = context;
    return fi_trecvmsg(b().ep, &msg, flags);
  }

  // Peeks for message n (with `extra` flags) until it is found, as an
  // application's probe loop does: each peek's answer is read (a
  // completion or an FI_ENOMSG error entry) and nothing else runs.
  absl::StatusOr<Completion> PeekUntilFound(size_t n, uint64_t extra,
                                            fi_context* context) {
    Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
      ssize_t rc = Receive(n, FI_PEEK | extra, context);
      if (rc != 0) return absl::InternalError("fi_trecvmsg(FI_PEEK) failed");
      fi_cq_err_entry error = {};
      absl::StatusOr<Completion> answer =
          b().Wait(std::chrono::seconds(5), &error);
      if (answer.ok()) return answer;
      if (error.err != FI_ENOMSG) return answer.status();
    }
    return absl::DeadlineExceededError(
        "FI_PEEK never saw a message that was sent");
  }

  // The fields every report of message n carries.
  void ExpectMessage(const Completion& got, size_t n) {
    EXPECT_TRUE(got.entry.flags & FI_TAGGED);
    EXPECT_TRUE(got.entry.flags & FI_RECV);
    EXPECT_EQ(got.entry.len, kSize);
    EXPECT_EQ(got.entry.tag, kTagBase + n);
    EXPECT_TRUE(got.entry.flags & FI_REMOTE_CQ_DATA);
    EXPECT_EQ(got.entry.data, kDataBase + n);
    if (rdm_) {
      EXPECT_EQ(got.source, b().peer) << "fi_cq_readfrom's source";
    }
  }

  // Waits for a's send completions.
  void DrainSends(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      absl::StatusOr<Completion> sent = a().Wait();
      ASSERT_TRUE(sent.ok()) << sent.status();
    }
  }

  bool rdm_ = false;
  std::vector<std::vector<char>> payloads_;
};

TEST_P(PeekTest, PeekSeesMessagesThatArrivedAndReportsThem) {
  SendAll();
  for (size_t n = 0; n < kMessages; ++n) {
    fi_context context;
    absl::StatusOr<Completion> peeked = PeekUntilFound(n, 0, &context);
    ASSERT_TRUE(peeked.ok()) << peeked.status() << " (message " << n << ")";
    ExpectMessage(*peeked, n);
    EXPECT_EQ(peeked->entry.op_context, &context);
    // A peek leaves the message: a receive takes it.
    std::vector<char> buf(kSize);
    ASSERT_EQ(Receive(n, 0, &context, buf.data(), buf.size()), 0);
    absl::StatusOr<Completion> received = b().Wait();
    ASSERT_TRUE(received.ok()) << received.status();
    ExpectMessage(*received, n);
    EXPECT_EQ(buf, payloads_[n]);
  }
  DrainSends(kMessages);
}

TEST_P(PeekTest, ClaimTakesThePeekedMessage) {
  SendAll();
  for (size_t n = 0; n < kMessages; ++n) {
    fi_context context;
    absl::StatusOr<Completion> peeked = PeekUntilFound(n, FI_CLAIM, &context);
    ASSERT_TRUE(peeked.ok()) << peeked.status() << " (message " << n << ")";
    ExpectMessage(*peeked, n);
    std::vector<char> buf(kSize);
    ASSERT_EQ(Receive(n, FI_CLAIM, &context, buf.data(), buf.size()), 0);
    absl::StatusOr<Completion> claimed = b().Wait();
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ExpectMessage(*claimed, n);
    EXPECT_EQ(claimed->entry.op_context, &context);
    EXPECT_EQ(buf, payloads_[n]);
  }
  DrainSends(kMessages);
}

TEST_P(PeekTest, DiscardDropsTheMessage) {
  SendAll();
  fi_context context;
  absl::StatusOr<Completion> peeked = PeekUntilFound(0, FI_DISCARD, &context);
  ASSERT_TRUE(peeked.ok()) << peeked.status();
  ExpectMessage(*peeked, 0);
  // Gone: the next peek for it finds nothing once message 1 is here.
  ASSERT_TRUE(PeekUntilFound(1, 0, &context).ok());
  ASSERT_EQ(Receive(0, FI_PEEK, &context), 0);
  fi_cq_err_entry error = {};
  absl::StatusOr<Completion> none = b().Wait(std::chrono::seconds(5), &error);
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(error.err, FI_ENOMSG);
  EXPECT_EQ(error.op_context, &context);
  DrainSends(kMessages);
  for (size_t n = 1; n < kMessages; ++n) {
    std::vector<char> buf(kSize);
    ASSERT_EQ(Receive(n, 0, &context, buf.data(), buf.size()), 0);
    absl::StatusOr<Completion> received = b().Wait();
    ASSERT_TRUE(received.ok()) << received.status();
    EXPECT_EQ(buf, payloads_[n]);
  }
}

INSTANTIATE_CONFORMANCE_SUITE(PeekTest);

}  // namespace
}  // namespace ofi::conformance

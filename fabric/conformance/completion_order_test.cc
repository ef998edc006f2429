// What a stream of small messages must keep, on every reliable case: many
// more injects than any queue holds all arrive, once and in order, and
// report nothing at the sender; sends and receives completing on one CQ
// are each reported once, in their order, also when the application reads
// many entries at a time (paths that hand completions straight from a
// device's queue to the reader, as verbs does, must keep both).
#include <rdma/fi_errno.h>

#include <cstdint>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

class CompletionOrderTest : public PairTest {
 protected:
  // Skips datagrams: they may be lost.
  void SkipUnreliable() {
    if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  }
};

struct Numbered {
  uint64_t number;
  uint64_t check;
};

uint64_t CheckOf(uint64_t number) { return number * 0x9e3779b97f4a7c15ull; }

TEST_P(CompletionOrderTest, ManyMoreInjectsThanQueuesHoldArriveInOrder) {
  OPEN_PAIR_OR_SKIP(PairOptions());
  SkipUnreliable();
  constexpr uint64_t kMessages = 3000;
  constexpr size_t kPosted = 32;
  if (pair_.info().tx_attr->inject_size < sizeof(Numbered)) {
    GTEST_SKIP() << "inject_size " << pair_.info().tx_attr->inject_size;
  }
  std::vector<Numbered> in(kPosted);
  for (size_t i = 0; i < kPosted; ++i) {
    ASSERT_EQ(fi_recv(b().ep, &in[i], sizeof(Numbered), nullptr,
                      FI_ADDR_UNSPEC, &in[i]),
              0);
  }
  uint64_t sent = 0;
  uint64_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(60);
  while (received < kMessages) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << sent << " sent, " << received << " received";
    if (sent < kMessages) {
      Numbered out = {sent, CheckOf(sent)};
      ssize_t rc = fi_inject(a().ep, &out, sizeof(out), a().peer);
      if (rc == 0) {
        ++sent;
      } else {
        ASSERT_EQ(rc, -FI_EAGAIN) << fi_strerror(static_cast<int>(-rc));
      }
    }
    // The sender's CQ drives its progress and must stay empty.
    absl::StatusOr<std::optional<Completion>> at_a = a().Poll();
    ASSERT_TRUE(at_a.ok()) << at_a.status();
    ASSERT_FALSE(at_a->has_value()) << "fi_inject reported a completion";
    absl::StatusOr<std::optional<Completion>> at_b = b().Poll();
    ASSERT_TRUE(at_b.ok()) << at_b.status();
    if (!at_b->has_value()) continue;
    auto* got = static_cast<Numbered*>((*at_b)->entry.op_context);
    ASSERT_EQ((*at_b)->entry.len, sizeof(Numbered));
    ASSERT_EQ(got->number, received) << "out of order or lost";
    ASSERT_EQ(got->check, CheckOf(received));
    ++received;
    ASSERT_EQ(fi_recv(b().ep, got, sizeof(Numbered), nullptr, FI_ADDR_UNSPEC,
                      got),
              0);
  }
}

TEST_P(CompletionOrderTest, SendsAndReceivesOnOneCqComeOnceInTheirOrder) {
  OPEN_PAIR_OR_SKIP(PairOptions());
  SkipUnreliable();
  constexpr size_t kEach = 8;
  constexpr size_t kSize = 512;  // beyond inject sizes: sends complete
  std::vector<std::vector<char>> a_in(kEach, std::vector<char>(kSize));
  std::vector<std::vector<char>> b_in(kEach, std::vector<char>(kSize));
  std::vector<std::vector<char>> out(kEach, std::vector<char>(kSize, 'x'));
  for (size_t i = 0; i < kEach; ++i) {
    ASSERT_EQ(fi_recv(a().ep, a_in[i].data(), kSize, nullptr, FI_ADDR_UNSPEC,
                      &a_in[i]),
              0);
    ASSERT_EQ(fi_recv(b().ep, b_in[i].data(), kSize, nullptr, FI_ADDR_UNSPEC,
                      &b_in[i]),
              0);
  }
  for (size_t i = 0; i < kEach; ++i) {
    ASSERT_EQ(fi_send(a().ep, out[i].data(), kSize, nullptr, a().peer,
                      &out[i]),
              0);
  }
  // b answers each message as it arrives; b's own sends are left to
  // complete in b's CQ.
  size_t answered = 0;
  size_t b_sends = 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(30);
  size_t next_send = 0;
  size_t next_receive = 0;
  while (next_send < kEach || next_receive < kEach || b_sends < answered) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << next_send << " sends and " << next_receive << " receives seen";
    absl::StatusOr<std::optional<Completion>> at_b = b().Poll();
    ASSERT_TRUE(at_b.ok()) << at_b.status();
    if (at_b->has_value()) {
      if ((*at_b)->entry.flags & FI_SEND) {
        ++b_sends;
      } else {
        ASSERT_EQ((*at_b)->entry.op_context, &b_in[answered]);
        ASSERT_EQ(fi_send(b().ep, out[answered].data(), kSize, nullptr,
                          b().peer, nullptr),
                  0);
        ++answered;
      }
    }
    // Many at a time: each entry once, sends and receives each in order.
    fi_cq_tagged_entry entries[2 * kEach];
    ssize_t n = fi_cq_read(a().cq, entries, 2 * kEach);
    if (n == -FI_EAGAIN) continue;
    ASSERT_GT(n, 0) << fi_strerror(static_cast<int>(-n));
    for (ssize_t i = 0; i < n; ++i) {
      if (entries[i].flags & FI_SEND) {
        ASSERT_LT(next_send, kEach) << "a send reported twice";
        ASSERT_EQ(entries[i].op_context, &out[next_send]);
        ++next_send;
      } else {
        ASSERT_LT(next_receive, kEach) << "a receive reported twice";
        ASSERT_TRUE(entries[i].flags & FI_RECV);
        ASSERT_EQ(entries[i].op_context, &a_in[next_receive]);
        ASSERT_EQ(entries[i].len, kSize);
        ++next_receive;
      }
    }
  }
  absl::StatusOr<std::optional<Completion>> none = a().Poll();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value()) << "an entry beyond those posted";
}

INSTANTIATE_CONFORMANCE_SUITE(CompletionOrderTest);

}  // namespace
}  // namespace ofi::conformance

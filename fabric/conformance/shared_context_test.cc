// Shared receive and transmit contexts (fi_endpoint(3), "Shared
// Contexts") on every provider and endpoint type that offers
// FI_SHARED_CONTEXT: both endpoints of the pair take their receives from
// one fi_srx_context, each message the first receive posted there,
// completing to the CQ of the endpoint it arrived on; both transmit
// through one fi_stx_context whose size bounds what they have in flight
// together. Where a case does not offer them, fi_getinfo says so
// (-FI_ENODATA) and the test is skipped.
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

class SharedContextTest : public PairTest {
 protected:
  // Waits for `count` completions on `side`, polling both.
  std::vector<Completion> Collect(Side& side, size_t count) {
    std::vector<Completion> got;
    Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
    while (got.size() < count && Clock::now() < deadline) {
      absl::StatusOr<std::optional<Completion>> one = side.Poll();
      EXPECT_TRUE(one.ok()) << one.status();
      if (!one.ok()) break;
      if (one->has_value()) got.push_back(**one);
    }
    EXPECT_EQ(got.size(), count);
    return got;
  }
};

struct Slot {
  char bytes[16] = {};
};

TEST_P(SharedContextTest, ReceivesPostedOnTheContextServeBothEndpoints) {
  PairOptions options;
  options.caps = FI_MSG;
  options.shared_rx = true;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  fid_ep* srx = pair_.srx();
  ASSERT_NE(srx, nullptr);

  // Receives go to the context, not to the endpoints.
  Slot own;
  EXPECT_EQ(fi_recv(b().ep, own.bytes, sizeof(own.bytes), nullptr,
                    FI_ADDR_UNSPEC, &own),
            -FI_EOPNOTSUPP);
  // Nor can it close while they are bound.
  EXPECT_EQ(fi_close(&srx->fid), -FI_EBUSY);

  Slot slots[4];
  for (Slot& slot : slots) {
    ASSERT_EQ(fi_recv(srx, slot.bytes, sizeof(slot.bytes), nullptr,
                      FI_ADDR_UNSPEC, &slot),
              0);
  }
  char a0[] = "a0", a1[] = "a1", b0[] = "b0", b1[] = "b1";
  ASSERT_EQ(fi_send(a().ep, a0, sizeof(a0), nullptr, a().peer, a0), 0);
  ASSERT_EQ(fi_send(a().ep, a1, sizeof(a1), nullptr, a().peer, a1), 0);
  ASSERT_EQ(fi_send(b().ep, b0, sizeof(b0), nullptr, b().peer, b0), 0);
  ASSERT_EQ(fi_send(b().ep, b1, sizeof(b1), nullptr, b().peer, b1), 0);
  // Each side: its two send completions and the two messages it received.
  std::map<const void*, std::string> received;  // receive -> message
  for (Side* side : {&a(), &b()}) {
    std::vector<const Slot*> mine;
    for (const Completion& c : Collect(*side, 4)) {
      if (!(c.entry.flags & FI_RECV)) continue;
      const Slot* slot = static_cast<const Slot*>(c.entry.op_context);
      mine.push_back(slot);
      received[slot] = slot->bytes;
      EXPECT_EQ(c.entry.len, 3u);
    }
    ASSERT_EQ(mine.size(), 2u);
    // An endpoint's messages take the context's receives in posting order.
    EXPECT_LT(mine[0], mine[1]);
    std::string first = received[mine[0]], second = received[mine[1]];
    EXPECT_EQ(first[1], '0');
    EXPECT_EQ(second[1], '1');
    EXPECT_EQ(first[0], side == &a() ? 'b' : 'a') << "received by the wrong "
                                                     "endpoint";
  }
  EXPECT_EQ(received.size(), 4u) << "a receive was used twice";

  // A message that arrives first waits for a receive posted on the
  // context.
  char late[] = "late";
  ASSERT_EQ(fi_send(a().ep, late, sizeof(late), nullptr, a().peer, late), 0);
  Slot waiting;
  ASSERT_EQ(fi_recv(srx, waiting.bytes, sizeof(waiting.bytes), nullptr,
                    FI_ADDR_UNSPEC, &waiting),
            0);
  std::vector<Completion> both = Collect(b(), 1);
  std::vector<Completion> sent = Collect(a(), 1);
  ASSERT_EQ(sent.size(), 1u);
  both.push_back(sent.front());
  size_t receives = 0;
  for (const Completion& c : both) {
    if (!(c.entry.flags & FI_RECV)) continue;
    ++receives;
    EXPECT_EQ(c.entry.op_context, &waiting);
  }
  EXPECT_EQ(receives, 1u);
  EXPECT_STREQ(waiting.bytes, "late");
}

TEST_P(SharedContextTest, ATaggedMessageWaitsForItsTaggedReceive) {
  PairOptions options;
  options.caps = FI_MSG | FI_TAGGED;
  options.shared_rx = true;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  fid_ep* srx = pair_.srx();
  ASSERT_NE(srx, nullptr);
  char late[] = "late";
  ASSERT_EQ(fi_tsend(a().ep, late, sizeof(late), nullptr, a().peer, 0x42,
                     late),
            0);
  ASSERT_EQ(Collect(a(), 1).size(), 1u);
  Slot tagged;
  ASSERT_EQ(fi_trecv(srx, tagged.bytes, sizeof(tagged.bytes), nullptr,
                     FI_ADDR_UNSPEC, 0x42, 0, &tagged),
            0);
  std::vector<Completion> got = Collect(b(), 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].entry.op_context, &tagged);
  EXPECT_EQ(got[0].entry.tag, 0x42u);
  EXPECT_STREQ(tagged.bytes, "late");
}

// No CQ room is reserved for a receive of the context (the endpoint it
// completes on is not known when it is posted): completions that find the
// CQ full are not lost, and every one arrives, in order, as it is read.
TEST_P(SharedContextTest, CompletionsThatFindTheCqFullAreKept) {
  constexpr size_t kMessages = 6;
  PairOptions options;
  options.caps = FI_MSG;
  options.shared_rx = true;
  options.cq_size_b = 1;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  Slot slots[kMessages];
  for (Slot& slot : slots) {
    ASSERT_EQ(fi_recv(pair_.srx(), slot.bytes, sizeof(slot.bytes), nullptr,
                      FI_ADDR_UNSPEC, &slot),
              0);
  }
  std::vector<std::string> out(kMessages);
  for (size_t i = 0; i < kMessages; ++i) {
    out[i] = "m" + std::to_string(i);
    ASSERT_EQ(fi_send(a().ep, out[i].c_str(), out[i].size() + 1, nullptr,
                      a().peer, nullptr),
              0);
  }
  ASSERT_EQ(Collect(a(), kMessages).size(), kMessages);
  // Let them all arrive at the full CQ before anything is read.
  for (int i = 0; i < 100; ++i) (void)a().Poll();
  std::vector<Completion> got = Collect(b(), kMessages);
  ASSERT_EQ(got.size(), kMessages);
  for (size_t i = 0; i < kMessages; ++i) {
    EXPECT_EQ(got[i].entry.op_context, &slots[i]);
    EXPECT_EQ(std::string(slots[i].bytes), out[i]);
  }
}

TEST_P(SharedContextTest, CancelOnTheContext) {
  PairOptions options;
  options.caps = FI_MSG;
  options.shared_rx = true;
  OPEN_PAIR_OR_SKIP(options);
  // Where the context cannot take a receive back (verbs: an SRQ), fi_cancel
  // says so for any context.
  if (!CancelsReceives(pair_.srx())) GTEST_SKIP() << "fi_cancel: -FI_ENOSYS";
  Slot slot;
  ASSERT_EQ(fi_recv(pair_.srx(), slot.bytes, sizeof(slot.bytes), nullptr,
                    FI_ADDR_UNSPEC, &slot),
            0);
  EXPECT_EQ(fi_cancel(&pair_.srx()->fid, &slot), 0);
  EXPECT_EQ(fi_cancel(&pair_.srx()->fid, &slot), -FI_ENOENT);
}

TEST_P(SharedContextTest, OneTransmitContextBoundsBothEndpoints) {
  // Enough to fill the 4 slots many times over; few enough for soft-RoCE
  // under emulation (300 took 19.9-28.5 s there) within the deadline.
  constexpr size_t kEach = 100;
  PairOptions options;
  options.caps = FI_MSG;
  options.shared_tx = true;
  options.shared_tx_size = 4;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  EXPECT_EQ(fi_close(&pair_.stx()->fid), -FI_EBUSY);
  // Bad binds: unknown flags, a second context.
  EXPECT_EQ(fi_ep_bind(a().ep, &pair_.stx()->fid, 1), -FI_EBADFLAGS);
  EXPECT_EQ(fi_ep_bind(a().ep, &pair_.stx()->fid, 0), -FI_EINVAL);
  // Large enough to stay in flight until the peer takes them.
  std::vector<char> payload(256 * 1024, 'x');
  std::vector<char> inbox[2] = {std::vector<char>(payload.size()),
                                std::vector<char>(payload.size())};
  size_t sent[2] = {0, 0}, done[2] = {0, 0}, received[2] = {0, 0};
  bool refused = false;
  Side* sides[2] = {&a(), &b()};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_recv(sides[i]->ep, inbox[i].data(), inbox[i].size(),
                      nullptr, FI_ADDR_UNSPEC, &inbox[i]),
              0);
  }
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  while ((done[0] + done[1] < 2 * kEach ||
          received[0] + received[1] < 2 * kEach) &&
         Clock::now() < deadline) {
    for (int i = 0; i < 2; ++i) {
      if (sent[i] < kEach) {
        ssize_t rc = fi_send(sides[i]->ep, payload.data(), payload.size(),
                             nullptr, sides[i]->peer, nullptr);
        if (rc == 0) {
          ++sent[i];
        } else {
          ASSERT_EQ(rc, -FI_EAGAIN);
          refused = true;
        }
      }
      absl::StatusOr<std::optional<Completion>> one = sides[i]->Poll();
      ASSERT_TRUE(one.ok()) << one.status();
      if (!one->has_value()) continue;
      if ((*one)->entry.flags & FI_SEND) {
        ++done[i];
        continue;
      }
      ++received[i];
      ASSERT_EQ(fi_recv(sides[i]->ep, inbox[i].data(), inbox[i].size(),
                        nullptr, FI_ADDR_UNSPEC, &inbox[i]),
                0);
    }
  }
  EXPECT_EQ(done[0], kEach);
  EXPECT_EQ(done[1], kEach);
  EXPECT_EQ(received[0], kEach);
  EXPECT_EQ(received[1], kEach);
  EXPECT_TRUE(refused) << "4 slots never filled up";
}

INSTANTIATE_CONFORMANCE_SUITE(SharedContextTest);

}  // namespace
}  // namespace ofi::conformance

// A completion is never lost (fi_cq(3), fi_domain(3) resource management),
// on every provider and endpoint type: a target whose receive CQ holds one
// or four entries gets every message and every remote CQ data of hundreds
// of sends and writes with data posted before it reads, exactly once, in
// order, with its bytes intact; an initiator whose CQ holds one or four
// entries gets a completion for every send. With FI_RM_ENABLED and
// FI_RM_DISABLED alike.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kOps = 200;     // sends with data, and as many writes
constexpr size_t kMsgSize = 64;  // each send's payload

class FullCqTest : public PairTest {
 protected:
  // a sends kOps messages and kOps writes with remote CQ data, alternating,
  // to b, whose CQ holds `cq_size` entries and which reads it only once a
  // has posted all it could.
  void SendsAndWritesToAFullCq(size_t cq_size, fi_resource_mgmt rm,
                               size_t idle_endpoints = 0,
                               fi_threading threading = FI_THREAD_UNSPEC);
  // a, whose CQ holds `cq_size` entries, sends `count` messages.
  void SendsFromASmallCq(size_t cq_size, fi_resource_mgmt rm,
                         fi_threading threading = FI_THREAD_UNSPEC);
};

// The byte `i` of message `n`.
char Pattern(size_t n, size_t i) { return static_cast<char>(n * 7 + i); }

void FullCqTest::SendsAndWritesToAFullCq(size_t cq_size, fi_resource_mgmt rm,
                                         size_t idle_endpoints,
                                         fi_threading threading) {
  PairOptions options;
  options.idle_endpoints = idle_endpoints;
  options.threading = threading;
  options.caps = FI_MSG | FI_RMA | FI_MULTI_RECV;
  options.resource_mgmt = rm;
  options.cq_size_b = cq_size;
  options.region_size = kOps * sizeof(uint64_t);
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";

  // b: one multi-receive buffer for every message (its completions take no
  // reserved room: the CQ overflows unless the provider holds them back).
  std::vector<char> inbox(kOps * kMsgSize + kMsgSize / 4);
  ASSERT_EQ(b().PostMultiRecv(inbox.data(), inbox.size(), &inbox), 0);

  std::vector<std::vector<char>> payloads(kOps, std::vector<char>(kMsgSize));
  std::vector<uint64_t> values(kOps);
  for (size_t n = 0; n < kOps; ++n) {
    for (size_t i = 0; i < kMsgSize; ++i) payloads[n][i] = Pattern(n, i);
    values[n] = 0x1000 + n;
  }
  uint64_t key = fi_mr_key(b().mr);
  size_t posted = 0;  // operations of a: 2n is send n, 2n+1 is write n
  size_t a_done = 0;
  // Posts what a can; false once it has refused for a while (it waits for
  // b) or everything is posted.
  auto post_more = [&](std::chrono::milliseconds patience) {
    Clock::time_point give_up = Clock::now() + patience;
    while (posted < 2 * kOps && Clock::now() < give_up) {
      size_t n = posted / 2;
      ssize_t rc =
          posted % 2 == 0
              ? fi_senddata(a().ep, payloads[n].data(), kMsgSize, nullptr,
                            posted, a().peer, &payloads[n])
              : fi_writedata(a().ep, &values[n], sizeof(uint64_t), nullptr,
                             posted, a().peer,
                             pair_.RegionAddress(n * sizeof(uint64_t)), key,
                             &values[n]);
      if (rc == 0) {
        ++posted;
        continue;
      }
      ASSERT_EQ(rc, -FI_EAGAIN) << "operation " << posted;
      absl::StatusOr<std::optional<Completion>> done = a().Poll();
      ASSERT_TRUE(done.ok()) << done.status();
      if (done->has_value()) ++a_done;
    }
  };
  post_more(std::chrono::milliseconds(300));
  if (HasFatalFailure()) return;

  // b reads one entry at a time while a goes on. (verbs in the emulated
  // guest under --config=ubsan took 20 s for 355 of the 400.)
  size_t b_done = 0;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(90);
  while ((b_done < 2 * kOps || a_done < 2 * kOps) &&
         Clock::now() < deadline) {
    post_more(std::chrono::milliseconds(0));
    if (HasFatalFailure()) return;
    absl::StatusOr<std::optional<Completion>> mine = a().Poll();
    ASSERT_TRUE(mine.ok()) << mine.status();
    if (mine->has_value()) ++a_done;
    absl::StatusOr<std::optional<Completion>> got = b().Poll();
    ASSERT_TRUE(got.ok()) << got.status() << " at entry " << b_done;
    if (!got->has_value()) continue;
    const fi_cq_tagged_entry& entry = (*got)->entry;
    size_t n = b_done / 2;
    ASSERT_LT(b_done, 2 * kOps) << "an entry too many";
    ASSERT_TRUE(entry.flags & FI_REMOTE_CQ_DATA) << "entry " << b_done;
    EXPECT_EQ(entry.data, b_done) << "entries out of order or lost";
    if (b_done % 2 == 0) {
      EXPECT_TRUE(entry.flags & FI_RECV) << "entry " << b_done;
      EXPECT_EQ(entry.len, kMsgSize);
      EXPECT_EQ(entry.buf, inbox.data() + n * kMsgSize);
      EXPECT_EQ(memcmp(inbox.data() + n * kMsgSize, payloads[n].data(),
                       kMsgSize),
                0)
          << "message " << n << " corrupted";
      EXPECT_EQ((entry.flags & FI_MULTI_RECV) != 0, n == kOps - 1);
    } else {
      EXPECT_TRUE(entry.flags & FI_REMOTE_WRITE) << "entry " << b_done;
    }
    ++b_done;
  }
  EXPECT_EQ(posted, 2 * kOps);
  EXPECT_EQ(a_done, 2 * kOps) << "initiator completions";
  ASSERT_EQ(b_done, 2 * kOps) << "target entries";
  for (size_t n = 0; n < kOps; ++n) {
    uint64_t value;
    memcpy(&value, b().region.data() + n * sizeof(uint64_t), sizeof(value));
    EXPECT_EQ(value, values[n]) << "write " << n;
  }
  absl::StatusOr<std::optional<Completion>> extra = b().Poll();
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_FALSE(extra->has_value()) << "an entry reported twice";
}

void FullCqTest::SendsFromASmallCq(size_t cq_size, fi_resource_mgmt rm,
                                   fi_threading threading) {
  constexpr size_t kSends = 500;
  constexpr size_t kPosted = 32;  // receives b keeps posted
  PairOptions options;
  options.threading = threading;
  options.caps = FI_MSG;
  options.resource_mgmt = rm;
  options.cq_size_a = cq_size;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";

  std::vector<uint64_t> out(kSends);
  std::vector<uint64_t> in(kPosted);
  size_t sent = 0, a_done = 0, receives = 0, b_done = 0;
  auto post_receive = [&]() {
    size_t slot = receives % kPosted;
    ASSERT_EQ(fi_recv(b().ep, &in[slot], sizeof(uint64_t), nullptr,
                      FI_ADDR_UNSPEC, &in[slot]),
              0);
    ++receives;
  };
  for (size_t i = 0; i < kPosted; ++i) post_receive();
  if (HasFatalFailure()) return;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  while ((a_done < kSends || b_done < kSends) && Clock::now() < deadline) {
    if (sent < kSends) {
      out[sent] = sent;
      ssize_t rc = fi_send(a().ep, &out[sent], sizeof(uint64_t), nullptr,
                           a().peer, &out[sent]);
      if (rc == 0) {
        ++sent;
      } else {
        ASSERT_EQ(rc, -FI_EAGAIN);
      }
    }
    absl::StatusOr<std::optional<Completion>> mine = a().Poll();
    ASSERT_TRUE(mine.ok()) << mine.status();
    if (mine->has_value()) {
      EXPECT_EQ((*mine)->entry.op_context, &out[a_done])
          << "send completions out of order or lost";
      ++a_done;
    }
    absl::StatusOr<std::optional<Completion>> got = b().Poll();
    ASSERT_TRUE(got.ok()) << got.status();
    if (got->has_value()) {
      uint64_t* slot = static_cast<uint64_t*>((*got)->entry.op_context);
      EXPECT_EQ(*slot, b_done) << "messages out of order";
      ++b_done;
      if (receives < kSends) post_receive();
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(a_done, kSends) << "send completions";
  EXPECT_EQ(b_done, kSends) << "messages";
  absl::StatusOr<std::optional<Completion>> extra = a().Poll();
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_FALSE(extra->has_value()) << "a send reported twice";
}

TEST_P(FullCqTest, TargetCqOfOneWithResourceManagement) {
  SendsAndWritesToAFullCq(1, FI_RM_ENABLED);
}
TEST_P(FullCqTest, TargetCqOfFourWithResourceManagement) {
  SendsAndWritesToAFullCq(4, FI_RM_ENABLED);
}
TEST_P(FullCqTest, TargetCqOfOneWithoutResourceManagement) {
  SendsAndWritesToAFullCq(1, FI_RM_DISABLED);
}
TEST_P(FullCqTest, TargetCqOfFourWithoutResourceManagement) {
  SendsAndWritesToAFullCq(4, FI_RM_DISABLED);
}
// With more sources than a pass polls one by one, a held message is let go
// although its socket or ring has nothing new to read once the CQ drains.
TEST_P(FullCqTest, TargetCqOfOneAmongManyEndpoints) {
  SendsAndWritesToAFullCq(1, FI_RM_ENABLED, 12);
}
TEST_P(FullCqTest, InitiatorCqOfOneWithResourceManagement) {
  SendsFromASmallCq(1, FI_RM_ENABLED);
}
TEST_P(FullCqTest, InitiatorCqOfFourWithoutResourceManagement) {
  SendsFromASmallCq(4, FI_RM_DISABLED);
}
// Where the application serializes every call on the domain (FI_THREAD_DOMAIN
// under manual progress), the CQ counts its room without locked
// instructions (util/cq.h CqSerialized): the same room, the same order.
TEST_P(FullCqTest, TargetCqOfOneSerializedByTheApplication) {
  SendsAndWritesToAFullCq(1, FI_RM_ENABLED, 0, FI_THREAD_DOMAIN);
}
TEST_P(FullCqTest, InitiatorCqOfOneSerializedByTheApplication) {
  SendsFromASmallCq(1, FI_RM_ENABLED, FI_THREAD_DOMAIN);
}

INSTANTIATE_CONFORMANCE_SUITE(FullCqTest);

}  // namespace
}  // namespace ofi::conformance

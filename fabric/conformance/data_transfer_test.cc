// The shapes of data transfer every provider and endpoint type shares, run
// on each that claims the capability: messages of 0 B to 16 MiB, vectored
// sends and receives, inject, tagged matching with ignore bits, messages
// that arrive before their receive, directed receives, cancel, a peer that
// goes away, and bad input on the calls (a clear negative fi_errno, nothing
// lost, no crash). RMA and atomics: rma_atomic_test.cc.
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include "fabric/conformance/data_transfer_testing.h"

namespace ofi::conformance {
namespace {

TEST_P(DataTransferTest, MessagesFromZeroBytesTo16MiB) {
  OPEN_OR_SKIP(FI_MSG);
  size_t max = pair_.info().ep_attr->max_msg_size;
  for (size_t size : {size_t{0}, size_t{1}, size_t{64}, size_t{4095},
                      size_t{65536}, size_t{1} << 20, size_t{16} << 20}) {
    if (size > max) continue;
    SCOPED_TRACE(size);
    std::vector<char> out = Pattern(size, static_cast<int>(size));
    std::vector<char> in(size + 1, 0);
    ASSERT_EQ(fi_recv(b().ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      &in),
              0);
    ssize_t rc;
    while ((rc = fi_send(a().ep, out.data(), out.size(), nullptr, a().peer,
                         &out)) == -FI_EAGAIN) {
      (void)a().Poll();
    }
    ASSERT_EQ(rc, 0);
    Completion got = NextReceive(b());
    EXPECT_EQ(got.entry.op_context, &in);
    EXPECT_EQ(got.entry.len, size);
    EXPECT_TRUE(got.entry.flags & FI_RECV);
    EXPECT_TRUE(got.entry.flags & FI_MSG);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
    WaitSends(1);
  }
}

// A large message (which RDM over MSG endpoints moves by rendezvous: the
// receiver reads it from the sender) with more messages right behind it
// than the connection's buffers hold: all arrive whole and in order (a
// connection that stopped taking messages while it read the large one
// stalled its provider, and the answers to its reads with it).
TEST_P(DataTransferTest, ALargeMessageWithABurstBehindItArrivesWhole) {
  OPEN_OR_SKIP(FI_MSG);
  constexpr size_t kLarge = 256 * 1024;
  constexpr size_t kSmall = 12 * 1024;
  constexpr size_t kBurst = 40;
  if (pair_.info().ep_attr->max_msg_size < kLarge) {
    GTEST_SKIP() << "messages of 256 KiB are not offered";
  }
  std::vector<std::vector<char>> out, in;
  out.reserve(kBurst + 1);  // &in[i] is a receive's context
  in.reserve(kBurst + 1);
  for (size_t i = 0; i <= kBurst; ++i) {
    size_t size = i == 0 ? kLarge : kSmall;
    out.push_back(Pattern(size, static_cast<int>(i + 1)));
    in.emplace_back(size, 0);
    ASSERT_EQ(fi_recv(b().ep, in[i].data(), size, nullptr, FI_ADDR_UNSPEC,
                      &in[i]),
              0);
  }
  for (size_t i = 0; i <= kBurst; ++i) {
    ssize_t rc;
    while ((rc = fi_send(a().ep, out[i].data(), out[i].size(), nullptr,
                         a().peer, &out[i])) == -FI_EAGAIN) {
      (void)a().Poll();
      (void)b().Poll();
    }
    ASSERT_EQ(rc, 0) << "message " << i;
  }
  size_t sends = 0;
  for (size_t i = 0; i <= kBurst; ++i) {
    absl::StatusOr<Completion> c = b().Wait();
    ASSERT_TRUE(c.ok()) << "message " << i << ": " << c.status();
    if (c->entry.flags & FI_SEND) {
      ++sends;  // a and b share a CQ in some cases
      --i;
      continue;
    }
    ASSERT_EQ(c->entry.op_context, &in[i]) << "message " << i;
    ASSERT_EQ(c->entry.len, out[i].size());
    ASSERT_TRUE(in[i] == out[i]) << "message " << i;
  }
  WaitSends(kBurst + 1 - sends);
}

// Small messages (which a read may take straight from the stream into its
// buffer) between large and empty ones (which take longer ways) complete
// once each, in the order sent, whether the application reads one entry at
// a time or several.
TEST_P(DataTransferTest, SmallMessagesAmongLargeOnesCompleteInOrder) {
  OPEN_OR_SKIP(FI_MSG);
  constexpr size_t kMessages = 30;
  const size_t large =
      std::min<size_t>(64 * 1024, pair_.info().ep_attr->max_msg_size);
  std::vector<std::vector<char>> out, in;
  out.reserve(kMessages);  // &in[i] is a receive's context
  in.reserve(kMessages);
  for (size_t i = 0; i < kMessages; ++i) {
    size_t size = i % 3 == 0 ? 64 : i % 3 == 1 ? large : 0;
    out.push_back(Pattern(size, static_cast<int>(i + 7)));
    in.emplace_back(large, 0);
    ASSERT_EQ(
        fi_recv(b().ep, in[i].data(), large, nullptr, FI_ADDR_UNSPEC, &in[i]),
        0);
  }
  for (size_t i = 0; i < kMessages; ++i) {
    ssize_t rc;
    while ((rc = fi_send(a().ep, out[i].data(), out[i].size(), nullptr,
                         a().peer, nullptr)) == -FI_EAGAIN) {
      (void)a().Poll();
      (void)b().Poll();
    }
    ASSERT_EQ(rc, 0) << "message " << i;
  }
  size_t next = 0;
  size_t sends = 0;  // a and b share a CQ in some cases
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (size_t read = 0; next < kMessages; ++read) {
    ASSERT_LT(Clock::now(), deadline) << next << " messages arrived";
    if (a().cq != b().cq) {  // a's reads move its large messages on
      absl::StatusOr<std::optional<Completion>> at_a = a().Poll();
      ASSERT_TRUE(at_a.ok()) << at_a.status();
      if (at_a->has_value()) ++sends;
    }
    fi_cq_tagged_entry entries[4];
    ssize_t n = fi_cq_read(b().cq, entries, 1 + read % 4);
    if (n == -FI_EAGAIN) continue;
    ASSERT_GT(n, 0) << fi_strerror(static_cast<int>(-n));
    for (ssize_t e = 0; e < n; ++e) {
      if (entries[e].flags & FI_SEND) {
        ++sends;
        continue;
      }
      ASSERT_LT(next, kMessages) << "a receive reported twice";
      ASSERT_EQ(entries[e].op_context, &in[next]) << "message " << next;
      ASSERT_EQ(entries[e].len, out[next].size()) << "message " << next;
      ASSERT_TRUE(
          std::equal(out[next].begin(), out[next].end(), in[next].begin()))
          << "message " << next;
      ++next;
    }
  }
  WaitSends(kMessages - sends);
}

TEST_P(DataTransferTest, VectoredSendIntoVectoredReceive) {
  OPEN_OR_SKIP(FI_MSG);
  size_t tx_limit = pair_.info().tx_attr->iov_limit;
  size_t rx_limit = pair_.info().rx_attr->iov_limit;
  if (tx_limit < 3 || rx_limit < 2) GTEST_SKIP() << "iov_limit too small";
  std::vector<char> out = Pattern(3000, 5);
  iovec send_iov[3] = {{out.data(), 1000}, {out.data() + 1000, 7},
                       {out.data() + 1007, 1993}};
  std::vector<char> first(100), second(2900);
  iovec recv_iov[2] = {{first.data(), first.size()},
                       {second.data(), second.size()}};
  ASSERT_EQ(fi_recvv(b().ep, recv_iov, nullptr, 2, FI_ADDR_UNSPEC, &first), 0);
  ASSERT_EQ(fi_sendv(a().ep, send_iov, nullptr, 3, a().peer, &out), 0);
  Completion got = NextReceive(b());
  EXPECT_EQ(got.entry.len, 3000u);
  EXPECT_EQ(memcmp(first.data(), out.data(), 100), 0);
  EXPECT_EQ(memcmp(second.data(), out.data() + 100, 2900), 0);
  WaitSends(1);
  // One more piece than the limit is refused.
  std::vector<iovec> too_many(tx_limit + 1, {out.data(), 1});
  EXPECT_EQ(fi_sendv(a().ep, too_many.data(), nullptr, too_many.size(),
                     a().peer, nullptr),
            -FI_EINVAL);
}

TEST_P(DataTransferTest, InjectHasNoCompletionAndAStrictLimit) {
  OPEN_OR_SKIP(FI_MSG);
  size_t limit = pair_.info().tx_attr->inject_size;
  ASSERT_GT(limit, 0u);
  std::vector<char> out = Pattern(limit, 9);
  std::vector<char> in(limit);
  ASSERT_EQ(fi_recv(b().ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_inject(a().ep, out.data(), out.size(), a().peer), 0);
  out.assign(limit, 0);  // the buffer is the application's again at once
  Completion got = NextReceive(b());
  EXPECT_EQ(got.entry.len, limit);
  EXPECT_EQ(in, Pattern(limit, 9));
  absl::StatusOr<std::optional<Completion>> none = a().Poll();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value()) << "fi_inject reported a completion";
  std::vector<char> big(limit + 1);
  EXPECT_EQ(fi_inject(a().ep, big.data(), big.size(), a().peer), -FI_EINVAL);
}

TEST_P(DataTransferTest, TaggedMatchingHonoursIgnoreBitsAndOrder) {
  OPEN_OR_SKIP(FI_TAGGED);
  uint64_t got_tags[3] = {};
  // 0x12xx with the low byte ignored; then an exact 0x1300.
  ASSERT_EQ(fi_trecv(b().ep, &got_tags[0], 8, nullptr, FI_ADDR_UNSPEC, 0x1200,
                     0xff, &got_tags[0]),
            0);
  ASSERT_EQ(fi_trecv(b().ep, &got_tags[1], 8, nullptr, FI_ADDR_UNSPEC, 0x1300,
                     0, &got_tags[1]),
            0);
  uint64_t first = 0x1300, second = 0x12ab;
  ASSERT_EQ(fi_tsend(a().ep, &first, 8, nullptr, a().peer, 0x1300, nullptr),
            0);
  ASSERT_EQ(fi_tsend(a().ep, &second, 8, nullptr, a().peer, 0x12ab, nullptr),
            0);
  for (int i = 0; i < 2; ++i) {
    Completion got = NextReceive(b());
    EXPECT_TRUE(got.entry.flags & FI_TAGGED);
    if (got.entry.op_context == &got_tags[0]) {
      EXPECT_EQ(got.entry.tag, 0x12abu);
      EXPECT_EQ(got_tags[0], 0x12abu);
    } else {
      EXPECT_EQ(got.entry.op_context, &got_tags[1]);
      EXPECT_EQ(got.entry.tag, 0x1300u);
      EXPECT_EQ(got_tags[1], 0x1300u);
    }
  }
  // Unexpected: sent first, matched by a receive posted later, in order.
  for (uint64_t n = 0; n < 3; ++n) {
    ASSERT_EQ(fi_tsend(a().ep, &n, 8, nullptr, a().peer, 0x77, nullptr), 0);
    WaitSends(1);
  }
  for (uint64_t n = 0; n < 3; ++n) {
    uint64_t value = 99;
    ASSERT_EQ(fi_trecv(b().ep, &value, 8, nullptr, FI_ADDR_UNSPEC, 0x77, 0,
                       &value),
              0);
    NextReceive(b());
    EXPECT_EQ(value, n);
  }
}

TEST_P(DataTransferTest, MessagesThatArriveBeforeTheirReceiveWait) {
  OPEN_OR_SKIP(FI_MSG);
  std::vector<char> out = Pattern(5000, 3);
  ASSERT_EQ(fi_send(a().ep, out.data(), out.size(), nullptr, a().peer,
                    nullptr),
            0);
  // Let it arrive and find nothing.
  for (int i = 0; i < 100; ++i) (void)b().Poll();
  std::vector<char> in(out.size());
  ASSERT_EQ(fi_recv(b().ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  Completion got = NextReceive(b());
  EXPECT_EQ(got.entry.len, out.size());
  EXPECT_EQ(in, out);
}

TEST_P(DataTransferTest, DirectedReceivesTakeOnlyTheirSource) {
  OPEN_OR_SKIP(FI_MSG | FI_DIRECTED_RECV);
  if (pair_.info().ep_attr->type != FI_EP_RDM) GTEST_SKIP() << "RDM only";
  uint64_t from_b = 0, from_any = 0;
  // A receive for b's own address never takes a's message; the open one
  // posted after it does.
  ASSERT_EQ(fi_recv(b().ep, &from_b, 8, nullptr, b().self, &from_b), 0);
  ASSERT_EQ(fi_recv(b().ep, &from_any, 8, nullptr, a().self, &from_any), 0);
  uint64_t value = 0x5a5a;
  ASSERT_EQ(fi_send(a().ep, &value, 8, nullptr, a().peer, nullptr), 0);
  Completion got = NextReceive(b());
  EXPECT_EQ(got.entry.op_context, &from_any);
  EXPECT_EQ(from_any, 0x5a5au);
  EXPECT_EQ(got.source, a().self);
  EXPECT_EQ(fi_cancel(&b().ep->fid, &from_b), 0);
  fi_cq_err_entry error = {};
  EXPECT_FALSE(b().Wait(std::chrono::seconds(5), &error).ok());
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, &from_b);
}

TEST_P(DataTransferTest, CancelReportsTheReceiveOnce) {
  OPEN_OR_SKIP(FI_MSG, 0, false);
  if (!CancelsReceives(b().ep)) GTEST_SKIP() << "fi_cancel: -FI_ENOSYS";
  char buf[16];
  ASSERT_EQ(fi_recv(b().ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, buf),
            0);
  EXPECT_EQ(fi_cancel(&b().ep->fid, buf), 0);
  fi_cq_err_entry error = {};
  EXPECT_FALSE(b().Wait(std::chrono::seconds(5), &error).ok());
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, buf);
  EXPECT_EQ(fi_cancel(&b().ep->fid, buf), -FI_ENOENT);
  absl::StatusOr<std::optional<Completion>> none = b().Poll();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST_P(DataTransferTest, BadInputIsRefusedWithAnError) {
  OPEN_OR_SKIP(FI_MSG, 0, false);
  char buf[8] = {};
  iovec iov = {buf, sizeof(buf)};
  fi_msg msg = {};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = a().peer;
  // Unknown flags.
  EXPECT_EQ(fi_sendmsg(a().ep, &msg, 1ULL << 62), -FI_EBADFLAGS);
  EXPECT_EQ(fi_recvmsg(b().ep, &msg, FI_INJECT | (1ULL << 62)), -FI_EBADFLAGS);
  // FI_PEEK belongs to tagged receives.
  EXPECT_EQ(fi_recvmsg(b().ep, &msg, FI_PEEK), -FI_EBADFLAGS);
  // NULL where memory is needed.
  EXPECT_EQ(fi_sendmsg(a().ep, nullptr, 0), -FI_EINVAL);
  msg.msg_iov = nullptr;
  EXPECT_EQ(fi_sendmsg(a().ep, &msg, 0), -FI_EINVAL);
  EXPECT_EQ(fi_send(a().ep, nullptr, 8, nullptr, a().peer, nullptr),
            -FI_EINVAL);
  // An address the AV does not hold.
  if (pair_.info().ep_attr->type != FI_EP_MSG) {
    ssize_t rc = fi_send(a().ep, buf, sizeof(buf), nullptr, 12345, nullptr);
    EXPECT_LT(rc, 0);
    EXPECT_NE(rc, -FI_EAGAIN);
  }
  // Nothing was posted by any of them: no completion anywhere.
  for (Side* side : {&a(), &b()}) {
    absl::StatusOr<std::optional<Completion>> none = side->Poll();
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_FALSE(none->has_value());
  }
  // And the pair still works.
  ASSERT_EQ(fi_recv(b().ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, buf), 0);
  ASSERT_EQ(fi_send(a().ep, "hello!!", 8, nullptr, a().peer, nullptr), 0);
  if (pair_.Reliable()) {
    Completion got = NextReceive(b());
    EXPECT_STREQ(buf, "hello!!");
    EXPECT_EQ(got.entry.len, 8u);
  }
}

// max_msg_size is a limit (here 4 KiB at most, asked of fi_endpoint): one
// byte more is refused, not sent as something else; a receive buffer of
// any size is taken.
TEST_P(DataTransferTest, SizesBeyondTheLimitsAreRefusedAndHugeBuffersTaken) {
  PairOptions options;
  options.max_msg_size = 4096;
  OPEN_PAIR_OR_SKIP(options);
  // 4 KiB, or less where the provider offers less (verbs datagrams: the
  // port's MTU).
  const size_t limit = pair_.info().ep_attr->max_msg_size;
  ASSERT_LE(limit, 4096u);
  std::vector<char> out(limit + 1, 'm');
  EXPECT_EQ(fi_send(a().ep, out.data(), out.size(), nullptr, a().peer,
                    nullptr),
            -FI_EMSGSIZE);
  iovec two[2] = {{out.data(), limit}, {out.data(), 1}};
  if (pair_.info().tx_attr->iov_limit >= 2) {
    EXPECT_EQ(fi_sendv(a().ep, two, nullptr, 2, a().peer, nullptr),
              -FI_EMSGSIZE);
  }
  // A receive larger than SSIZE_MAX (a length, not memory to touch: it is
  // cancelled before anything arrives, so only where receives cancel).
  if (CancelsReceives(b().ep)) {
    char small[8];
    ASSERT_EQ(fi_recv(b().ep, small, SIZE_MAX, nullptr, FI_ADDR_UNSPEC,
                      small),
              0);
    ASSERT_EQ(fi_cancel(&b().ep->fid, small), 0);
    fi_cq_err_entry error = {};
    EXPECT_FALSE(b().Wait(std::chrono::seconds(5), &error).ok());
    EXPECT_EQ(error.err, FI_ECANCELED);
  }
  // Nothing was sent: the limit itself goes through.
  std::vector<char> in(limit);
  ASSERT_EQ(fi_recv(b().ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                    &in),
            0);
  ASSERT_EQ(fi_send(a().ep, out.data(), limit, nullptr, a().peer, &out), 0);
  if (pair_.Reliable()) {
    Completion got = NextReceive(b());
    EXPECT_EQ(got.entry.len, limit);
  }
}

// The pair's domains are opened without FI_MR_LOCAL or FI_MR_HMEM: a
// descriptor is not needed, so a garbage one is not read (fi_mr(3)).
TEST_P(DataTransferTest, GarbageDescriptorsAreNotRead) {
  OPEN_OR_SKIP(FI_MSG);
  ASSERT_EQ(pair_.info().domain_attr->mr_mode & (FI_MR_LOCAL | FI_MR_HMEM),
            0);
  void* garbage = reinterpret_cast<void*>(0xdeadbeef);
  char in[16] = {};
  ASSERT_EQ(fi_recv(b().ep, in, sizeof(in), garbage, FI_ADDR_UNSPEC, in), 0);
  char out[16] = "not read: desc";
  ASSERT_EQ(fi_send(a().ep, out, sizeof(out), garbage, a().peer, out), 0);
  Completion got = NextReceive(b());
  EXPECT_EQ(got.entry.len, sizeof(out));
  EXPECT_STREQ(in, out);
  WaitSends(1);
}

// Larger than any inline send: the provider reads it where it is.
const char kReadOnly[8192] = "in read-only memory";

// A send from read-only memory works (a provider that registers the
// buffer itself must not ask to write it), and a buffer unmapped and
// mapped again at the same address sends its new bytes (nothing keeps
// the old pages).
TEST_P(DataTransferTest, SendsReadTheBuffersMemoryAsItIsNow) {
  OPEN_OR_SKIP(FI_MSG);
  std::vector<char> in(sizeof(kReadOnly));
  ASSERT_EQ(fi_recv(b().ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(a().ep, kReadOnly, sizeof(kReadOnly), nullptr, a().peer,
                    nullptr),
            0);
  NextReceive(b());
  WaitSends(1);
  EXPECT_STREQ(in.data(), kReadOnly);
  constexpr size_t kMapped = 64 * 1024;
  void* first = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(first, MAP_FAILED);
  memset(first, 'o', kMapped);
  for (char fill : {'o', 'n'}) {
    if (fill == 'n') {
      ASSERT_EQ(munmap(first, kMapped), 0);
      // Another thread may have mapped into the hole meanwhile: never
      // replace its mapping.
      void* again = mmap(first, kMapped, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                         -1, 0);
      if (again == MAP_FAILED && errno == EEXIST) {
        GTEST_SKIP() << "the address was taken again before the test could";
      }
      ASSERT_EQ(again, first);
      memset(first, 'n', kMapped);
    }
    std::vector<char> got(kMapped);
    ASSERT_EQ(fi_recv(b().ep, got.data(), got.size(), nullptr,
                      FI_ADDR_UNSPEC, nullptr),
              0);
    ASSERT_EQ(fi_send(a().ep, first, kMapped, nullptr, a().peer, nullptr), 0);
    NextReceive(b());
    WaitSends(1);
    EXPECT_EQ(got, std::vector<char>(kMapped, fill));
  }
  munmap(first, kMapped);
}

TEST_P(DataTransferTest, APeerThatGoesAwayFailsTransmitsWithoutHanging) {
  OPEN_OR_SKIP(FI_MSG);
  ASSERT_EQ(fi_close(&b().ep->fid), 0);
  b().ep = nullptr;
  std::vector<char> out(64 * 1024, 'z');
  // Transmits fail, at posting or in their completions; none hangs.
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  size_t failed = 0, posted = 0, completed = 0;
  while (failed == 0 && Clock::now() < deadline) {
    ssize_t rc = fi_send(a().ep, out.data(), out.size(), nullptr, a().peer,
                         &out);
    if (rc == 0) ++posted;
    if (rc < 0 && rc != -FI_EAGAIN) ++failed;
    fi_cq_err_entry error = {};
    absl::StatusOr<std::optional<Completion>> got = a().Poll(&error);
    if (!got.ok()) {
      ++failed;
    } else if (got->has_value()) {
      ++completed;
    }
  }
  EXPECT_GT(failed, 0u) << posted << " sends to a closed peer, " << completed
                        << " completed, none failed";
}

INSTANTIATE_CONFORMANCE_SUITE(DataTransferTest);

}  // namespace
}  // namespace ofi::conformance

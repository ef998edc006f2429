// Messages from a peer the receiver's AV does not hold yet (fi_av(3),
// fi_tagged(3)), on every connectionless provider that claims
// FI_DIRECTED_RECV: a process may send as soon as it knows its peer, before
// the peer has inserted the sender's address (Open MPI inserts addresses
// lazily, so its first messages often arrive this way). Once the receiver
// inserts the sender's address, a receive directed at that fi_addr_t takes
// the messages that arrived before, in order, and FI_SOURCE reports the
// new fi_addr_t (for receives of any source too). Before the fix, the tagged messages stayed unmatched
// forever: an MPI_Allreduce between two network namespaces hung.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

class LateAvInsertTest : public PairTest {};

constexpr size_t kMessages = 4;
constexpr uint64_t kTag = 0x5a;

std::string Payload(size_t n) { return "message " + std::to_string(n); }

// Sends kMessages tagged (or untagged) messages from a to b and waits for
// their send completions.
void SendFromA(Side& a, bool tagged) {
  std::vector<std::string> out;
  for (size_t n = 0; n < kMessages; ++n) out.push_back(Payload(n));
  for (size_t n = 0; n < kMessages; ++n) {
    ssize_t rc;
    do {
      rc = tagged ? fi_tsend(a.ep, out[n].data(), out[n].size() + 1, nullptr,
                             a.peer, kTag, &out[n])
                  : fi_send(a.ep, out[n].data(), out[n].size() + 1, nullptr,
                            a.peer, &out[n]);
      if (rc == -FI_EAGAIN) (void)a.Poll();
    } while (rc == -FI_EAGAIN);
    ASSERT_EQ(rc, 0) << "send " << n;
  }
  for (size_t n = 0; n < kMessages; ++n) {
    absl::StatusOr<Completion> sent = a.Wait();
    ASSERT_TRUE(sent.ok()) << sent.status();
  }
}

// Lets b's progress take in what arrived while nothing can match it.
void LetArrive(Side& b) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (std::chrono::steady_clock::now() < until) {
    absl::StatusOr<std::optional<Completion>> polled = b.Poll();
    ASSERT_TRUE(polled.ok()) << polled.status();
    ASSERT_FALSE(polled->has_value()) << "a completion with no receive posted";
  }
}

// Receives the messages at b, in order, with receives (posted on `on`: b's
// endpoint or its shared receive context) directed at a or taking any
// source.
void Receive(Side& b, fid_ep* on, bool tagged, bool directed) {
  fi_addr_t from = directed ? b.peer : FI_ADDR_UNSPEC;
  for (size_t n = 0; n < kMessages; ++n) {
    char in[64] = {};
    ssize_t rc =
        tagged ? fi_trecv(on, in, sizeof(in), nullptr, from, kTag, 0, in)
               : fi_recv(on, in, sizeof(in), nullptr, from, in);
    ASSERT_EQ(rc, 0) << "receive " << n;
    absl::StatusOr<Completion> got = b.Wait(std::chrono::seconds(5));
    ASSERT_TRUE(got.ok()) << "receive " << n << ": " << got.status();
    EXPECT_EQ(got->entry.op_context, in);
    EXPECT_EQ(std::string(in), Payload(n));
    EXPECT_EQ(got->source, b.peer) << "FI_SOURCE of message " << n;
  }
}

void SendInsertReceive(EndpointPair& pair, bool tagged, bool directed) {
  ASSERT_NO_FATAL_FAILURE(SendFromA(pair.a(), tagged));
  ASSERT_NO_FATAL_FAILURE(LetArrive(pair.b()));
  ASSERT_TRUE(pair.InsertAAtB().ok());
  fid_ep* on = pair.srx() != nullptr ? pair.srx() : pair.b().ep;
  Receive(pair.b(), on, tagged, directed);
}

PairOptions LateOptions(uint64_t caps) {
  PairOptions options;
  options.caps = caps | FI_DIRECTED_RECV | FI_SOURCE;
  options.b_learns_a_late = true;
  return options;
}

TEST_P(LateAvInsertTest, TaggedMessagesMatchDirectedReceivesAfterInsert) {
  OPEN_PAIR_OR_SKIP(LateOptions(FI_TAGGED));
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  SendInsertReceive(pair_, /*tagged=*/true, /*directed=*/true);
}

TEST_P(LateAvInsertTest, MessagesMatchDirectedReceivesAfterInsert) {
  OPEN_PAIR_OR_SKIP(LateOptions(FI_MSG));
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  SendInsertReceive(pair_, /*tagged=*/false, /*directed=*/true);
}

// The message waits in the endpoint it arrived on, the receive in the
// shared context, which has no AV of its own: b's is the one to look in.
TEST_P(LateAvInsertTest, DirectedReceivesOnASharedContextTakeThem) {
  PairOptions options = LateOptions(FI_TAGGED);
  options.shared_rx = true;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  SendInsertReceive(pair_, /*tagged=*/true, /*directed=*/true);
}

TEST_P(LateAvInsertTest, AnySourceReceivesReportTheInsertedAddress) {
  OPEN_PAIR_OR_SKIP(LateOptions(FI_TAGGED));
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  SendInsertReceive(pair_, /*tagged=*/true, /*directed=*/false);
}

INSTANTIATE_CONFORMANCE_SUITE(LateAvInsertTest);

}  // namespace
}  // namespace ofi::conformance

// FI_MULTI_RECV (fi_msg(3)) on every provider and endpoint type that claims
// it: one posted buffer takes consecutive messages, each completion pointing
// at its place in the buffer with the buffer's context; once less than
// FI_OPT_MIN_MULTI_RECV bytes remain, the buffer is released (one entry
// carries FI_MULTI_RECV, after all of its messages) and the next posted
// buffer takes the messages that follow, in order, bytes intact.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <cstring>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

class MultiRecvTest : public PairTest {};

char Byte(size_t message, size_t i) {
  return static_cast<char>(message * 13 + i * 3 + 1);
}

TEST_P(MultiRecvTest, BuffersFillInOrderAndAreReleasedBelowTheMinimum) {
  constexpr size_t kBufferSize = 1024;
  constexpr size_t kMin = 128;
  constexpr size_t kMsgSize = 100;
  constexpr size_t kMessages = 25;
  // 1024 - 9 * 100 = 124 < 128: buffers 0 and 1 take 9 messages each and
  // are released; buffer 2 takes the last 7 and stays posted.
  constexpr size_t kPerBuffer = 9;
  PairOptions options;
  options.caps = FI_MSG | FI_MULTI_RECV;
  OPEN_PAIR_OR_SKIP(options);
  if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
  size_t min = kMin;
  ASSERT_EQ(fi_setopt(&b().ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &min, sizeof(min)),
            0);
  size_t read_back = 0, len = sizeof(read_back);
  ASSERT_EQ(fi_getopt(&b().ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &read_back, &len),
            0);
  EXPECT_EQ(read_back, kMin);

  std::vector<std::vector<char>> buffers(3, std::vector<char>(kBufferSize));
  for (std::vector<char>& buffer : buffers) {
    ASSERT_EQ(b().PostMultiRecv(buffer.data(), buffer.size(), &buffer), 0);
  }
  std::vector<std::vector<char>> out(kMessages, std::vector<char>(kMsgSize));
  for (size_t n = 0; n < kMessages; ++n) {
    for (size_t i = 0; i < kMsgSize; ++i) out[n][i] = Byte(n, i);
    ssize_t rc;
    while ((rc = fi_send(a().ep, out[n].data(), kMsgSize, nullptr, a().peer,
                         &out[n])) == -FI_EAGAIN) {
      (void)a().Poll();
    }
    ASSERT_EQ(rc, 0) << "send " << n;
  }

  size_t received = 0;
  std::vector<size_t> releases(buffers.size(), 0);
  while (received < kMessages) {
    absl::StatusOr<Completion> got = b().Wait();
    ASSERT_TRUE(got.ok()) << got.status() << " after " << received;
    const fi_cq_tagged_entry& entry = got->entry;
    size_t which = static_cast<size_t>(
        static_cast<std::vector<char>*>(entry.op_context) - buffers.data());
    ASSERT_LT(which, buffers.size()) << "a context nobody posted";
    if (entry.flags & FI_MULTI_RECV) ++releases[which];
    if (entry.len == 0 && (entry.flags & FI_MULTI_RECV)) {
      // The release reported on its own: every message of the buffer came.
      EXPECT_EQ(received, (which + 1) * kPerBuffer);
      continue;
    }
    size_t expected_buffer = received / kPerBuffer;
    size_t slot = received % kPerBuffer;
    EXPECT_EQ(which, expected_buffer) << "message " << received;
    EXPECT_EQ(entry.len, kMsgSize);
    EXPECT_TRUE(entry.flags & FI_RECV);
    EXPECT_EQ(entry.buf, buffers[which].data() + slot * kMsgSize)
        << "message " << received << " not where the buffer's next bytes are";
    if (entry.flags & FI_MULTI_RECV) {
      EXPECT_EQ(slot, kPerBuffer - 1) << "released before it was used up";
    }
    EXPECT_EQ(memcmp(buffers[which].data() + slot * kMsgSize,
                     out[received].data(), kMsgSize),
              0)
        << "message " << received << " corrupted";
    ++received;
  }
  // The last release may come on its own entry after the last message.
  if (releases[1] == 0) {
    absl::StatusOr<Completion> got = b().Wait();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(got->entry.flags & FI_MULTI_RECV);
    EXPECT_EQ(got->entry.op_context, &buffers[1]);
    ++releases[1];
  }
  EXPECT_EQ(releases[0], 1u);
  EXPECT_EQ(releases[1], 1u);
  EXPECT_EQ(releases[2], 0u) << "released with room left";
  for (size_t n = 0; n < kMessages; ++n) {
    absl::StatusOr<Completion> sent = a().Wait();
    ASSERT_TRUE(sent.ok()) << sent.status() << " send " << n;
  }
  // The buffer still posted is cancelled, reported once.
  ASSERT_EQ(fi_cancel(&b().ep->fid, &buffers[2]), 0);
  fi_cq_err_entry error = {};
  EXPECT_FALSE(b().Wait(std::chrono::seconds(5), &error).ok());
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, &buffers[2]);
}

INSTANTIATE_CONFORMANCE_SUITE(MultiRecvTest);

}  // namespace
}  // namespace ofi::conformance

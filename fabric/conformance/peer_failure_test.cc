// Peers that go away (fi_cm(3), fi_endpoint(3)), on every provider and
// endpoint type where it applies:
//  - a connected peer that calls fi_shutdown: the other side's EQ reports
//    FI_SHUTDOWN for its endpoint, and its transmits fail from then on;
//  - a peer process killed with SIGKILL while it streams messages: a real
//    process, re-executed from this test binary, that never closes
//    anything, joined through the AV (RDM) or connected to the pair's
//    passive endpoint (MSG). The messages it sent arrive whole and in
//    order, transmits to it fail (at posting or in an error completion)
//    instead of hanging, a connection reports FI_SHUTDOWN, and the
//    endpoint (or the other connection) goes on working.
#include <fcntl.h>
#include <poll.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "fabric/conformance/endpoint_pair.h"

extern char** environ;

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMsgSize = 4096;
// Set in the re-executed peer: the hex address to stream to, and the fd to
// write its own hex address on.
constexpr char kStreamToEnv[] = "CONFORMANCE_STREAM_TO";
constexpr char kNameFdEnv[] = "CONFORMANCE_NAME_FD";

// Message `seq` of the streaming peer: its number, then bytes that depend
// on it.
void FillMessage(uint64_t seq, std::vector<char>* out) {
  memcpy(out->data(), &seq, sizeof(seq));
  for (size_t i = sizeof(seq); i < out->size(); ++i) {
    (*out)[i] = static_cast<char>(seq * 31 + i);
  }
}

bool MessageIntact(const std::vector<char>& in, uint64_t* seq) {
  memcpy(seq, in.data(), sizeof(*seq));
  std::vector<char> expected(in.size());
  FillMessage(*seq, &expected);
  return expected == in;
}

std::string NameOf(fid_ep* ep) {
  char name[256];
  size_t len = sizeof(name);
  if (fi_getname(&ep->fid, name, &len) != 0) return "";
  return absl::BytesToHexString(absl::string_view(name, len));
}

class PeerFailureTest : public PairTest {
 protected:
  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    PairTest::TearDown();
  }
  // The body of the re-executed peer: streams messages to the address in
  // kStreamToEnv until it is killed (or 60 s pass), through the AV (RDM,
  // after writing its own name) or over a connection to the passive
  // endpoint of that name (MSG, after writing "connecting").
  void StreamToParent(const char* hex_target);
  // Starts this test's binary as the streaming peer of `hex_target`; the
  // line it writes.
  std::string StartStreamingPeer(const std::string& hex_target);

  pid_t child_ = -1;
};

void PeerFailureTest::StreamToParent(const char* hex_target) {
  PairOptions options;
  ASSERT_TRUE(OpenPair(options).ok());
  std::string target = absl::HexStringToBytes(hex_target);
  const bool connected = pair_.info().ep_attr->type == FI_EP_MSG;
  fi_addr_t parent = FI_ADDR_UNSPEC;
  if (!connected) {
    ASSERT_EQ(fi_av_insert(pair_.av(), target.data(), 1, &parent, 0, nullptr),
              1);
  }
  std::string line = (connected ? "connecting" : NameOf(a().ep)) + "\n";
  int fd = atoi(getenv(kNameFdEnv));
  ASSERT_EQ(write(fd, line.data(), line.size()),
            static_cast<ssize_t>(line.size()));
  close(fd);
  fid_ep* ep = a().ep;
  if (connected) {
    absl::StatusOr<fid_ep*> more = pair_.ConnectOneMore(target);
    ASSERT_TRUE(more.ok()) << more.status();
    ep = *more;  // left open: the process is killed
  }
  std::vector<char> out(kMsgSize);
  uint64_t seq = 0;
  Clock::time_point end = Clock::now() + std::chrono::seconds(60);
  bool posted = false;
  while (Clock::now() < end) {
    if (!posted) {
      FillMessage(seq, &out);
      ssize_t rc =
          fi_send(ep, out.data(), out.size(), nullptr, parent, nullptr);
      if (rc == 0) {
        posted = true;
      } else {
        ASSERT_EQ(rc, -FI_EAGAIN);
      }
    }
    absl::StatusOr<std::optional<Completion>> done = a().Poll();
    ASSERT_TRUE(done.ok()) << done.status();
    // One message in flight at a time: `out` is reused.
    if (posted && done->has_value()) {
      posted = false;
      ++seq;
    }
  }
}

std::string PeerFailureTest::StartStreamingPeer(
    const std::string& hex_target) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return "";
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string filter = absl::StrCat("--gtest_filter=", test->test_suite_name(),
                                    ".", test->name());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.push_back(*e);
  env_strings.push_back(absl::StrCat(kStreamToEnv, "=", hex_target));
  env_strings.push_back(absl::StrCat(kNameFdEnv, "=", fds[1]));
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The name pipe's write end stays open in the child (it is CLOEXEC here);
  // the child's gtest output goes nowhere.
  posix_spawn_file_actions_adddup2(&actions, fds[1], fds[1]);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  int rc = posix_spawn(&child_, exe.c_str(), &actions, nullptr, argv,
                       env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    child_ = -1;
    return "";
  }
  std::string line;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  while (line.find('\n') == std::string::npos && Clock::now() < deadline) {
    pollfd ready = {fds[0], POLLIN, 0};
    if (poll(&ready, 1, 100) != 1) continue;
    char chunk[256];
    ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    line.append(chunk, n);
  }
  close(fds[0]);
  size_t end = line.find('\n');
  return end == std::string::npos ? "" : line.substr(0, end);
}

TEST_P(PeerFailureTest, AProcessKilledMidStream) {
  if (const char* target = getenv(kStreamToEnv)) {
    StreamToParent(target);
    return;
  }
  PairOptions options;
  OPEN_PAIR_OR_SKIP(options);
  if (pair_.info().ep_attr->type != FI_EP_RDM) {
    GTEST_SKIP() << "the streaming peer joins through the AV (RDM)";
  }
  std::string hex_name = StartStreamingPeer(NameOf(b().ep));
  ASSERT_FALSE(hex_name.empty()) << "the peer process did not start";
  std::string name = absl::HexStringToBytes(hex_name);
  fi_addr_t child_addr = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(pair_.av(), name.data(), 1, &child_addr, 0, nullptr),
            1);

  // b takes the stream, in order, then the peer is killed mid-stream.
  constexpr size_t kPosted = 4;
  std::vector<std::vector<char>> in(kPosted, std::vector<char>(kMsgSize));
  for (std::vector<char>& buf : in) {
    ASSERT_EQ(fi_recv(b().ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC,
                      &buf),
              0);
  }
  uint64_t next_seq = 0;
  // Checks a receive completion (the stream's: intact and in order) and
  // posts its buffer again; true when it came from a.
  auto check = [&](const Completion& got) -> bool {
    auto* buf = static_cast<std::vector<char>*>(got.entry.op_context);
    EXPECT_EQ(got.entry.len, kMsgSize);
    bool from_a = got.source == a().self;
    if (!from_a) {
      uint64_t seq;
      EXPECT_TRUE(MessageIntact(*buf, &seq)) << "message " << next_seq;
      EXPECT_EQ(seq, next_seq) << "the stream out of order";
      next_seq = seq + 1;
    }
    EXPECT_EQ(fi_recv(b().ep, buf->data(), buf->size(), nullptr,
                      FI_ADDR_UNSPEC, buf),
              0);
    return from_a;
  };
  // Waits up to `timeout` for a message; true when it came from a.
  auto take_one = [&](std::chrono::milliseconds timeout) -> bool {
    absl::StatusOr<Completion> got = b().Wait(timeout);
    return got.ok() && check(*got);
  };
  while (next_seq < 50 && !HasFailure()) {
    if (take_one(std::chrono::seconds(10))) ADD_FAILURE() << "from a?";
  }
  ASSERT_GE(next_seq, 50u) << "the stream did not arrive";
  ASSERT_EQ(kill(child_, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child_, &status, 0), child_);
  child_ = -1;
  EXPECT_TRUE(WIFSIGNALED(status));
  // What it sent before dying arrives, still in order, or not at all.
  while (take_one(std::chrono::milliseconds(200))) {
  }

  // Transmits to the dead peer fail; none hangs.
  std::vector<char> out(64 * 1024, 'd');
  size_t failed = 0, posted = 0;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  while (failed == 0 && Clock::now() < deadline) {
    ssize_t rc =
        fi_send(b().ep, out.data(), out.size(), nullptr, child_addr, &out);
    if (rc == 0) ++posted;
    if (rc < 0 && rc != -FI_EAGAIN) ++failed;
    absl::StatusOr<std::optional<Completion>> got = b().Poll();
    if (!got.ok()) {
      ++failed;
    } else if (got->has_value() && !((*got)->entry.flags & FI_SEND)) {
      check(**got);  // a late message of the stream
    }
  }
  EXPECT_GT(failed, 0u) << posted << " sends to a killed peer, none failed";

  // The endpoint still works with its other peer.
  uint64_t hello = 0x600d;
  std::vector<char> from_a(kMsgSize, 0);
  memcpy(from_a.data(), &hello, sizeof(hello));
  ASSERT_EQ(fi_send(a().ep, from_a.data(), from_a.size(), nullptr, a().peer,
                    &from_a),
            0);
  bool arrived = false;
  Clock::time_point until = Clock::now() + std::chrono::seconds(10);
  while (!arrived && Clock::now() < until) {
    arrived = take_one(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(arrived) << "a's message after the peer died";
}

// The start of a test with a connected peer process: in the re-executed
// peer, streams to the parent and returns; in the parent, opens the pair
// (connected endpoints only, else skips) and starts the peer, which
// connects to b's passive endpoint.
#define START_CONNECTED_PEER_OR_SKIP()                                     \
  do {                                                                     \
    if (const char* target = getenv(kStreamToEnv)) {                       \
      StreamToParent(target);                                              \
      return;                                                              \
    }                                                                      \
    PairOptions options;                                                   \
    OPEN_PAIR_OR_SKIP(options);                                            \
    if (pair_.info().ep_attr->type != FI_EP_MSG ||                         \
        pair_.provider_case().rxm) {                                       \
      GTEST_SKIP() << "connected endpoints only";                          \
    }                                                                      \
    ASSERT_EQ(                                                             \
        StartStreamingPeer(absl::BytesToHexString(pair_.ListenName())),    \
        "connecting")                                                      \
        << "the peer process did not start";                               \
  } while (0)

TEST_P(PeerFailureTest, AConnectedProcessKilledMidStream) {
  START_CONNECTED_PEER_OR_SKIP();
  constexpr size_t kPosted = 4;
  std::vector<std::vector<char>> in(kPosted, std::vector<char>(kMsgSize));
  absl::StatusOr<fid_ep*> accepted = pair_.AcceptOneMore([&](fid_ep* ep) {
    for (std::vector<char>& buf : in) {
      EXPECT_EQ(fi_recv(ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC,
                        &buf),
                0);
    }
  });
  if (HasFailure()) {
    if (accepted.ok()) fi_close(&(*accepted)->fid);
    return;
  }
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  fid_ep* to_child = *accepted;
  uint64_t next_seq = 0;
  bool killed = false;
  // Checks a message of the stream (intact, in order) and posts its
  // buffer again (after the kill the connection may refuse it).
  auto check = [&](const Completion& got) {
    auto* buf = static_cast<std::vector<char>*>(got.entry.op_context);
    EXPECT_EQ(got.entry.len, kMsgSize);
    uint64_t seq;
    EXPECT_TRUE(MessageIntact(*buf, &seq)) << "message " << next_seq;
    EXPECT_EQ(seq, next_seq) << "the stream out of order";
    next_seq = seq + 1;
    ssize_t rc = fi_recv(to_child, buf->data(), buf->size(), nullptr,
                         FI_ADDR_UNSPEC, buf);
    if (!killed) EXPECT_EQ(rc, 0);
  };
  while (next_seq < 50 && !HasFailure()) {
    absl::StatusOr<Completion> got = b().Wait();
    ASSERT_TRUE(got.ok()) << got.status();
    check(*got);
  }
  ASSERT_EQ(kill(child_, SIGKILL), 0);
  killed = true;
  int status = 0;
  ASSERT_EQ(waitpid(child_, &status, 0), child_);
  child_ = -1;
  EXPECT_TRUE(WIFSIGNALED(status));

  // What it sent before dying arrives, still in order, or not at all
  // (receives flushed as the connection ends are error entries); transmits
  // on the connection fail, none hangs; the EQ reports FI_SHUTDOWN.
  std::vector<char> out(64 * 1024, 'd');
  size_t failed = 0, posted = 0;
  bool shutdown = false;
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  while ((failed == 0 || !shutdown) && Clock::now() < deadline) {
    ssize_t rc = fi_send(to_child, out.data(), out.size(), nullptr,
                         FI_ADDR_UNSPEC, &out);
    if (rc == 0) ++posted;
    if (rc < 0 && rc != -FI_EAGAIN) ++failed;
    fi_cq_err_entry error = {};
    absl::StatusOr<std::optional<Completion>> got = b().Poll(&error);
    if (!got.ok()) {
      if (error.op_context == &out) ++failed;
    } else if (got->has_value() && !((*got)->entry.flags & FI_SEND)) {
      check(**got);
    }
    uint32_t event = 0;
    std::vector<char> data;
    ssize_t read = fabric::fixtures::WaitForEvent(
        b().eq, &event, &data, nullptr, std::chrono::milliseconds(0));
    if (read != -FI_EAGAIN) {
      ASSERT_GT(read, 0) << fi_strerror(static_cast<int>(-read));
      EXPECT_EQ(event, FI_SHUTDOWN);
      EXPECT_EQ(fabric::fixtures::CmEntryOf(data).fid, &to_child->fid);
      shutdown = true;
    }
  }
  EXPECT_GT(failed, 0u) << posted << " sends to a killed peer, none failed";
  EXPECT_TRUE(shutdown) << "no FI_SHUTDOWN in 30 s";
  EXPECT_EQ(fi_close(&to_child->fid), 0);

  // The pair's own connection still works.
  char hello[8] = "still";
  char got[8] = {};
  ASSERT_EQ(fi_recv(b().ep, got, sizeof(got), nullptr, FI_ADDR_UNSPEC, got),
            0);
  ASSERT_EQ(fi_send(a().ep, hello, sizeof(hello), nullptr, FI_ADDR_UNSPEC,
                    hello),
            0);
  Clock::time_point until = Clock::now() + std::chrono::seconds(10);
  bool arrived = false;
  while (!arrived && Clock::now() < until) {
    absl::StatusOr<std::optional<Completion>> done = b().Poll();
    arrived = done.ok() && done->has_value() &&
              (*done)->entry.op_context == got;
    (void)a().Poll();
  }
  EXPECT_TRUE(arrived) << "the pair's message after the peer died";
  EXPECT_STREQ(got, "still");
}

// A connected endpoint that is its CQ's only producer (verbs then reads
// that CQ straight from the device and runs the progress pass only now and
// then): when the peer process dies with transmits outstanding, the
// transmits complete in error on that CQ, and the application learns it
// from reading that CQ alone, never the EQ, well before an RC transport's
// retries give up (about 17 s on soft-RoCE).
TEST_P(PeerFailureTest, AKilledPeerFailsTransmitsSeenOnTheirOwnCq) {
  START_CONNECTED_PEER_OR_SKIP();
  fi_cq_attr attr = {};
  attr.format = FI_CQ_FORMAT_CONTEXT;
  fid_cq* own = nullptr;
  ASSERT_EQ(fi_cq_open(pair_.domain(), &attr, &own, nullptr), 0);
  absl::Cleanup close_own = [own] { EXPECT_EQ(fi_close(&own->fid), 0); };
  // Buffers first: they outlive the endpoint, which closes before the CQ.
  std::vector<char> in(kMsgSize);
  std::vector<char> out(4096, 'd');
  absl::StatusOr<fid_ep*> accepted = pair_.AcceptOneMore(
      [&](fid_ep* ep) {
        EXPECT_EQ(fi_recv(ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                          &in),
                  0);
      },
      own);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  fid_ep* to_child = *accepted;
  absl::Cleanup close_it = [to_child] {
    EXPECT_EQ(fi_close(&to_child->fid), 0);
  };
  if (HasFailure()) return;
  // Reads one entry of the own CQ: 1, 0 when empty, or -1 for an error
  // entry (taken).
  auto read_own = [&]() -> int {
    fi_cq_entry entry;
    ssize_t n = fi_cq_read(own, &entry, 1);
    if (n == 1) return 1;
    if (n == -FI_EAGAIN) return 0;
    EXPECT_EQ(n, -FI_EAVAIL);
    fi_cq_err_entry error = {};
    EXPECT_EQ(fi_cq_readerr(own, &error, 0), 1);
    return -1;
  };
  // The stream has begun: a message arrived.
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(20);
  int got = 0;
  while (got == 0 && Clock::now() < deadline) got = read_own();
  ASSERT_EQ(got, 1) << "no message from the peer";
  ASSERT_EQ(kill(child_, SIGKILL), 0);
  ASSERT_EQ(waitpid(child_, nullptr, 0), child_);
  child_ = -1;
  // Transmits go out to the dead peer and wait; only the CQ is read. Once
  // the endpoint refuses more (it has seen the connection end), those
  // posted must still come back, as error entries.
  size_t posted = 0, errors = 0;
  bool refused = false;
  deadline = Clock::now() + std::chrono::seconds(8);
  while (errors == 0 && Clock::now() < deadline) {
    if (!refused) {
      ssize_t rc = fi_send(to_child, out.data(), out.size(), nullptr,
                           FI_ADDR_UNSPEC, &out);
      if (rc == 0) ++posted;
      refused = rc < 0 && rc != -FI_EAGAIN;
    }
    if (read_own() < 0) ++errors;
  }
  ASSERT_GT(posted, 0u) << "no send to the killed peer was taken";
  EXPECT_GT(errors, 0u) << posted << " sends to a killed peer, no error "
                        << "entry in 8 s (refused: " << refused << ")";
}

TEST_P(PeerFailureTest, ShutdownReachesTheConnectedPeer) {
  PairOptions options;
  OPEN_PAIR_OR_SKIP(options);
  if (pair_.info().ep_attr->type != FI_EP_MSG || pair_.provider_case().rxm) {
    GTEST_SKIP() << "connected endpoints only";
  }
  ASSERT_EQ(fi_shutdown(b().ep, 0), 0);
  uint32_t event = 0;
  std::vector<char> data;
  ssize_t read = fabric::fixtures::WaitForEvent(a().eq, &event, &data, nullptr,
                                                std::chrono::seconds(10),
                                                [this] { (void)a().Poll(); });
  ASSERT_GT(read, 0) << "no FI_SHUTDOWN in 10 s: "
                     << fi_strerror(static_cast<int>(-read));
  EXPECT_EQ(event, FI_SHUTDOWN);
  EXPECT_EQ(fabric::fixtures::CmEntryOf(data).fid, &a().ep->fid);
  // Transmits of either side fail from now on.
  char byte = 1;
  for (Side* side : {&a(), &b()}) {
    ssize_t rc = fi_send(side->ep, &byte, 1, nullptr, FI_ADDR_UNSPEC, &byte);
    if (rc == 0) {
      fi_cq_err_entry error = {};
      EXPECT_FALSE(side->Wait(std::chrono::seconds(10), &error).ok());
      EXPECT_NE(error.err, 0);
    } else {
      EXPECT_NE(rc, -FI_EAGAIN);
    }
  }
}

INSTANTIATE_CONFORMANCE_SUITE(PeerFailureTest);

}  // namespace
}  // namespace ofi::conformance

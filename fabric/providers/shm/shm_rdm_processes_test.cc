// shm FI_EP_RDM endpoints in two processes (shm_echo_peer): messages of
// every size echoed back intact, large reads and writes of the peer's
// memory copied by both processes, a peer killed mid-transfer failing the
// transfer with FI_ECONNRESET, and the segment it left behind taken back.
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/address.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/shm/shm_names.h"
#include "gtest/gtest.h"

extern char** environ;

namespace fabric {
namespace {

class ShmProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        fixtures::OpenShmLoopback(0, &loopback_, &av_, &cq_, FI_MSG | FI_RMA),
        0);
    ASSERT_EQ(fixtures::OpenBoundEndpoint(loopback_.domain, loopback_.info, av_,
                                          cq_, &ep_),
              0);
  }

  void TearDown() override {
    if (child_ > 0) {
      kill(child_, SIGKILL);
      waitpid(child_, nullptr, 0);
    }
    for (fid* object : {&ep_->fid, &cq_->fid, &av_->fid}) {
      EXPECT_EQ(fi_close(object), 0);
    }
    EXPECT_EQ(fixtures::CloseObjects(&loopback_), 0);
  }

  // Starts shm_echo_peer (with `extra` arguments; its stderr, at
  // FI_LOG_LEVEL=warn, into peer_log_) and inserts its address into the AV.
  void StartPeer(const char* extra = nullptr) {
    sockaddr_in own = {};
    size_t len = sizeof(own);
    ASSERT_EQ(fi_getname(&ep_->fid, &own, &len), 0);
    std::string hex = fixtures::ToHex(&own, sizeof(own));
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    peer_log_ = absl::StrCat(getenv("TEST_TMPDIR"), "/peer.log");
    posix_spawn_file_actions_addopen(&actions, 2, peer_log_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const char* program = "fabric/providers/shm/shm_echo_peer";
    char* argv[] = {const_cast<char*>(program), hex.data(),
                    const_cast<char*>(extra), nullptr};
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    std::string level = "FI_LOG_LEVEL=warn";
    env.push_back(level.data());
    env.push_back(nullptr);
    ASSERT_EQ(
        posix_spawn(&child_, program, &actions, nullptr, argv, env.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    FILE* from_child = fdopen(out[0], "r");
    char line[128] = {};
    ASSERT_NE(fgets(line, sizeof(line), from_child), nullptr);
    fclose(from_child);
    ASSERT_EQ(strlen(line), 2 * sizeof(peer_) + 1) << line;
    for (size_t i = 0; i < sizeof(peer_); ++i) {
      unsigned value;
      ASSERT_EQ(sscanf(line + 2 * i, "%2x", &value), 1);
      reinterpret_cast<unsigned char*>(&peer_)[i] =
          static_cast<unsigned char>(value);
    }
    ASSERT_EQ(fi_av_insert(av_, &peer_, 1, &peer_addr_, 0, nullptr), 1);
  }

  // Reads cq_ until an entry or error; 1, -FI_EAVAIL, or -FI_EAGAIN after
  // `seconds`.
  ssize_t Wait(fi_cq_msg_entry* entry, int seconds = 10) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t rc = fi_cq_read(cq_, entry, 1);
      if (rc != -FI_EAGAIN) return rc;
    }
    return -FI_EAGAIN;
  }

  void StopPeer();

  // Sends `out` to the peer and checks that the echo is the same bytes.
  void Echo(const std::vector<char>& out) {
    std::vector<char> in(out.size() + 1);
    int recv_context, send_context;
    ASSERT_EQ(fi_recv(ep_, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      &recv_context),
              0);
    ASSERT_EQ(fi_send(ep_, out.data(), out.size(), nullptr, peer_addr_,
                      &send_context),
              0);
    bool sent = false, received = false;
    while (!sent || !received) {
      fi_cq_msg_entry entry;
      ASSERT_EQ(Wait(&entry), 1);
      if (entry.op_context == &send_context) sent = true;
      if (entry.op_context == &recv_context) {
        received = true;
        ASSERT_EQ(entry.len, out.size());
      }
    }
    in.resize(out.size());
    ASSERT_TRUE(in == out) << out.size() << " bytes came back changed";
  }

  fixtures::Objects loopback_;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  pid_t child_ = -1;
  std::string peer_log_;
  sockaddr_in peer_ = {};
  fi_addr_t peer_addr_ = FI_ADDR_NOTAVAIL;
};

// Ends the echo and waits for the peer to exit 0.
void ShmProcessesTest::StopPeer() {
  ASSERT_EQ(fi_send(ep_, nullptr, 0, nullptr, peer_addr_, nullptr), 0);
  fi_cq_msg_entry entry;
  ASSERT_EQ(Wait(&entry), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child_, &status, 0), child_);
  child_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(ShmProcessesTest, MessagesOfEverySizeComeBackIntact) {
  StartPeer();
  for (size_t size : {size_t{1}, size_t{64}, size_t{4096}, size_t{65536},
                      size_t{1} << 20, (size_t{3} << 20) + 7}) {
    std::vector<char> out(size);
    for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i * 31 + size);
    Echo(out);
  }
  StopPeer();
}

// Large reads and writes of the peer's memory, several in flight, of odd
// sizes at odd offsets: both processes copy them (each spins in
// fi_cq_read, and the one that copies asks the other for help: wire.h
// kAssist), and every byte lands where it belongs.
TEST_F(ShmProcessesTest, LargeRmaCopiedByBothProcessesLandsWhole) {
  StartPeer("--rma");
  uint64_t where[2];  // the peer's buffer: address and key
  int context;
  ASSERT_EQ(
      fi_recv(ep_, where, sizeof(where), nullptr, FI_ADDR_UNSPEC, &context), 0);
  fi_cq_msg_entry entry;
  ASSERT_EQ(Wait(&entry), 1);
  ASSERT_EQ(entry.len, sizeof(where));
  Echo(std::vector<char>(100, 'x'));  // both can copy the other's memory now
  constexpr size_t kOps = 3;
  constexpr size_t kSize = (size_t{2} << 20) + 4097;
  auto offset = [](size_t i) { return 7 + i * (kSize + 13); };
  std::vector<std::vector<char>> out;
  for (size_t i = 0; i < kOps; ++i) {
    out.push_back(fixtures::OffsetWords(kSize, uint64_t{i} << 56));
    ASSERT_EQ(fi_write(ep_, out[i].data(), kSize, nullptr, peer_addr_,
                       where[0] + offset(i), where[1], &out[i]),
              0);
  }
  for (size_t i = 0; i < kOps; ++i) ASSERT_EQ(Wait(&entry), 1);
  std::vector<std::vector<char>> back(kOps, std::vector<char>(kSize));
  for (size_t i = 0; i < kOps; ++i) {
    ASSERT_EQ(fi_read(ep_, back[i].data(), kSize, nullptr, peer_addr_,
                      where[0] + offset(i), where[1], &back[i]),
              0);
  }
  for (size_t i = 0; i < kOps; ++i) ASSERT_EQ(Wait(&entry), 1);
  for (size_t i = 0; i < kOps; ++i) {
    EXPECT_TRUE(back[i] == out[i]) << "operation " << i;
  }
  StopPeer();
}

// A peer that may not copy this process's memory (this process is not
// dumpable, the peer has no CAP_SYS_PTRACE) finds out when it connects,
// says so once, and large messages to it go through the rings, while its
// own large messages are still copied from its memory by this process.
TEST_F(ShmProcessesTest, APeerThatCannotCopyOurMemoryGetsTheRings) {
  ASSERT_EQ(prctl(PR_SET_DUMPABLE, 0), 0);
  StartPeer("--no-ptrace");
  for (size_t size : {size_t{65536}, (size_t{3} << 20) + 5}) {
    std::vector<char> out(size);
    for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i * 7 + 3);
    Echo(out);
  }
  StopPeer();
  ASSERT_EQ(prctl(PR_SET_DUMPABLE, 1), 0);
  std::ifstream log(peer_log_);
  std::string text((std::istreambuf_iterator<char>(log)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("cross-memory attach to a peer is not possible"),
            std::string::npos)
      << text;
}

// The peer stops (SIGSTOP) with an 8 MiB message on the way, then is
// killed: the send fails with FI_ECONNRESET instead of waiting forever, and
// an endpoint can take the dead peer's address.
TEST_F(ShmProcessesTest, APeerKilledMidTransferFailsTheTransfer) {
  StartPeer();
  Echo(std::vector<char>(100, 'x'));  // connected both ways
  ASSERT_EQ(kill(child_, SIGSTOP), 0);
  std::vector<char> big(8 << 20, 'y');
  int context;
  ASSERT_EQ(fi_send(ep_, big.data(), big.size(), nullptr, peer_addr_,
                    &context),
            0);
  fi_cq_msg_entry entry;
  EXPECT_EQ(Wait(&entry, 1), -FI_EAGAIN);  // stuck while the peer is stopped
  ASSERT_EQ(kill(child_, SIGKILL), 0);
  ASSERT_EQ(waitpid(child_, nullptr, 0), child_);
  child_ = -1;
  ASSERT_EQ(Wait(&entry), -FI_EAVAIL);
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(cq_, &error, 0), 1);
  EXPECT_EQ(error.err, FI_ECONNRESET) << fi_strerror(error.err);
  EXPECT_EQ(error.op_context, &context);

  // The dead peer's endpoint segment stays behind unless another process's
  // fi_getinfo (a test running beside this one) reclaimed it meanwhile;
  // either way its address can be taken again.
  absl::StatusOr<IpAddress> peer =
      IpFromUser(FI_SOCKADDR_IN, &peer_, sizeof(peer_));
  ASSERT_TRUE(peer.ok()) << peer.status();
  std::string left = "/dev/shm" + shm::EndpointSegmentName(*peer, "");
  struct stat st;
  fid_ep* heir = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &heir, nullptr), 0);
  EXPECT_EQ(fi_setname(&heir->fid, &peer_, sizeof(peer_)), 0);
  EXPECT_EQ(stat(left.c_str(), &st), 0);  // the heir's own segment now
  EXPECT_EQ(fi_close(&heir->fid), 0);
  EXPECT_NE(stat(left.c_str(), &st), 0);
}

// A peer in another network namespace cannot have its doorbell rung (an
// abstract socket), so the transmit that would connect to it is refused.
TEST_F(ShmProcessesTest, APeerInAnotherNetworkNamespaceIsRefused) {
  StartPeer("--own-netns");
  EXPECT_EQ(fi_inject(ep_, "x", 2, peer_addr_), -FI_ECONNREFUSED);
}

// Containers that share /dev/shm but not a network: an endpoint in another
// network namespace does not take an address in this one (each namespace
// has its own 127.0.0.1), and a transmit here reaches this namespace's
// endpoint at that address, not the other's.
TEST_F(ShmProcessesTest, AnAddressInAnotherNetworkNamespaceIsFreeHere) {
  StartPeer("--own-netns");
  fid_ep* twin = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &twin, nullptr), 0);
  EXPECT_EQ(fi_setname(&twin->fid, &peer_, sizeof(peer_)), 0);
  ASSERT_EQ(fi_ep_bind(twin, &av_->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(twin, &cq_->fid, FI_TRANSMIT | FI_RECV), 0);
  ASSERT_EQ(fi_enable(twin), 0);
  char in[8] = {};
  int recv_context, send_context;
  ASSERT_EQ(fi_recv(twin, in, sizeof(in), nullptr, FI_ADDR_UNSPEC,
                    &recv_context),
            0);
  ASSERT_EQ(fi_send(ep_, "twin", 5, nullptr, peer_addr_, &send_context), 0);
  bool sent = false, received = false;
  while (!sent || !received) {
    fi_cq_msg_entry entry;
    ASSERT_EQ(Wait(&entry), 1);
    sent |= entry.op_context == &send_context;
    received |= entry.op_context == &recv_context;
  }
  EXPECT_STREQ(in, "twin");
  EXPECT_EQ(fi_close(&twin->fid), 0);
}

}  // namespace
}  // namespace fabric

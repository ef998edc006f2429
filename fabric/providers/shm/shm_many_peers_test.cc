// A shm endpoint's fds do not grow with its peers: a process limited to 64
// fds (shm_fd_limited_hub) reaches 100 peer endpoints of another process
// (this one), each of which receives its message (before, each connection
// kept an fd, and 54 of 100 were reached under that limit); and running
// out of fds says so.
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

extern char** environ;

namespace fabric {
namespace shm {
namespace {

constexpr int kPeers = 100;
constexpr int kHubFdLimit = 64;

// Our kPeers endpoints, and a hub process sending to each.
class ShmManyPeersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fixtures::OpenShmLoopback(2 * kPeers, &loopback_, &av_, &cq_), 0);
    eps_.assign(kPeers, nullptr);
    inbox_.assign(kPeers, 0);
    for (int i = 0; i < kPeers; ++i) {
      ASSERT_EQ(fixtures::OpenBoundEndpoint(loopback_.domain, loopback_.info,
                                            av_, cq_, &eps_[i]),
                0)
          << i;
      ASSERT_EQ(fi_recv(eps_[i], &inbox_[i], sizeof(uint64_t), nullptr,
                        FI_ADDR_UNSPEC, &inbox_[i]),
                0);
      sockaddr_in name = {};
      size_t len = sizeof(name);
      ASSERT_EQ(fi_getname(&eps_[i]->fid, &name, &len), 0);
      addresses_ += fixtures::ToHex(&name, sizeof(name)) + "\n";
    }
  }

  void TearDown() override {
    for (fid_ep* ep : eps_) {
      if (ep != nullptr) EXPECT_EQ(fi_close(&ep->fid), 0);
    }
    if (cq_ != nullptr) EXPECT_EQ(fi_close(&cq_->fid), 0);
    if (av_ != nullptr) EXPECT_EQ(fi_close(&av_->fid), 0);
    EXPECT_EQ(fixtures::CloseObjects(&loopback_), 0);
  }

  // Runs the hub with `extra` (or none), progressing our endpoints (its
  // requests need them) until it is done and, when it succeeds, every
  // message came; what it printed, and its exit status in *status.
  std::string RunHub(const char* extra, int* status);

  fixtures::Objects loopback_;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  std::vector<fid_ep*> eps_;
  std::vector<uint64_t> inbox_;
  std::string addresses_;
  int received_ = 0;
};

std::string ShmManyPeersTest::RunHub(const char* extra, int* status) {
  // The hub reads the addresses on stdin; its stdout comes back here.
  int in[2], out[2];
  EXPECT_EQ(pipe(in), 0);
  EXPECT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  const char* program = "fabric/providers/shm/shm_fd_limited_hub";
  std::string limit = std::to_string(kHubFdLimit);
  char* argv[] = {const_cast<char*>(program), limit.data(),
                  const_cast<char*>(extra), nullptr};
  pid_t hub = -1;
  EXPECT_EQ(posix_spawn(&hub, program, &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  EXPECT_EQ(write(in[1], addresses_.data(), addresses_.size()),
            static_cast<ssize_t>(addresses_.size()));
  close(in[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  std::string said;
  bool exited = false;
  *status = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    fi_cq_msg_entry entry;
    if (fi_cq_read(cq_, &entry, 1) == 1) ++received_;
    char chunk[256];
    ssize_t n = read(out[0], chunk, sizeof(chunk));
    if (n > 0) said.append(chunk, static_cast<size_t>(n));
    if (!exited && waitpid(hub, status, WNOHANG) == hub) exited = true;
    bool failed = exited && !(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
    if (failed || (exited && received_ == kPeers)) break;
  }
  if (!exited) {
    kill(hub, SIGKILL);
    waitpid(hub, status, 0);
  }
  fcntl(out[0], F_SETFL, 0);
  char chunk[256];
  ssize_t n;
  while ((n = read(out[0], chunk, sizeof(chunk))) > 0) {
    said.append(chunk, static_cast<size_t>(n));
  }
  close(out[0]);
  return said;
}

TEST_F(ShmManyPeersTest, AProcessWith64FdsReaches100Peers) {
  int status;
  std::string said = RunHub(nullptr, &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "hub: "
                                                             << said;
  EXPECT_EQ(said, "sent " + std::to_string(kPeers) + "\n");
  ASSERT_EQ(received_, kPeers);
  for (int i = 0; i < kPeers; ++i) {
    EXPECT_EQ(inbox_[i], 0x6875622d746f2d70u) << i;
  }
}

// Whether this build checks dynamic types (UBSan's vptr check): the check
// makes a pipe to test that memory is readable, which a process without
// fds cannot, so it reports every virtual call there as made on a bad
// object.
bool ChecksDynamicTypes() {
  return dlsym(RTLD_DEFAULT, "__ubsan_handle_dynamic_type_cache_miss") !=
         nullptr;
}

// A process out of fds is told so (-FI_EMFILE), not that the peer refused.
TEST_F(ShmManyPeersTest, RunningOutOfFdsIsEmfile) {
  if (ChecksDynamicTypes()) {
    GTEST_SKIP() << "UBSan's vptr check needs fds of its own";
  }
  int status;
  std::string said = RunHub("--exhaust", &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << said;
  EXPECT_EQ(said, "fi_send at peer 0: Too many open files (-24)\n");
}

}  // namespace
}  // namespace shm
}  // namespace fabric

// One tcp RDM endpoint with peers of both kinds (tcp_local_path.h): a
// process on this host, reached through shm, and a process in another
// network namespace joined by a veth pair (made and removed here), reached
// over TCP. Every message of both arrives intact, in order per sender, from
// the source FI_SOURCE names, through the one receive queue and CQ; then a
// local peer that dies halfway through a 1 MiB message leaves the endpoint
// with error completions or receives it can cancel, never a hang, and the
// endpoint goes on serving a new peer.
#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/tcp/tcp_rdm_ep.h"
#include "gtest/gtest.h"

extern char** environ;

namespace fabric {
namespace tcp {
namespace {

constexpr char kPeer[] = "fabric/providers/tcp/local_path_peer";
constexpr size_t kCount = 60;  // messages per peer
constexpr size_t kBuffer = 1 << 20;

// The pattern local_path_peer sends.
bool Intact(const char* data, size_t size, uint64_t id, uint64_t seq) {
  uint64_t got = 0;
  if (size < sizeof(got)) return false;
  memcpy(&got, data, sizeof(got));
  if (got != seq) return false;
  for (size_t i = sizeof(got); i < size; ++i) {
    if (data[i] != static_cast<char>(id * 131 + seq * 7 + i)) return false;
  }
  return true;
}

// A local_path_peer process, through its stdin and stdout.
struct Peer {
  pid_t pid = -1;
  int to = -1;           // its stdin
  FILE* from = nullptr;  // its stdout
  uint64_t id = 0;
  fi_addr_t addr = FI_ADDR_NOTAVAIL;

  ~Peer() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (to >= 0) close(to);
    if (from != nullptr) fclose(from);
  }
  // Its exit status once it ends (within 10 s), or -1.
  int Wait() {
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(10000);
    }
    return -1;
  }
};

class TcpLocalPathProcessesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tag = std::to_string(getpid() % 100000);
    ns_ = "lp" + tag;
    veth_ = "lp" + tag + "a";
    std::string subnet =
        absl::StrCat("10.", 200 + getpid() % 50, ".", getpid() % 250);
    own_ip_ = subnet + ".1";
    remote_ip_ = subnet + ".2";
    // What a run with the same process id may have left behind.
    Run("ip netns del " + ns_);
    Run("ip link del " + veth_);
    if (Run("ip netns add " + ns_) != 0) {
      GTEST_SKIP() << "cannot create network namespaces here";
    }
    made_ns_ = true;
    ASSERT_EQ(Run(absl::StrCat("ip link add ", veth_, " type veth peer name ",
                               veth_, "b")),
              0);
    ASSERT_EQ(Run(absl::StrCat("ip link set ", veth_, "b netns ", ns_)), 0);
    ASSERT_EQ(Run(absl::StrCat("ip addr add ", own_ip_, "/24 dev ", veth_)), 0);
    ASSERT_EQ(Run(absl::StrCat("ip link set ", veth_, " up")), 0);
    ASSERT_EQ(Run(absl::StrCat("ip -n ", ns_, " addr add ", remote_ip_,
                               "/24 dev ", veth_, "b")),
              0);
    ASSERT_EQ(Run(absl::StrCat("ip -n ", ns_, " link set ", veth_, "b up")), 0);
    ASSERT_EQ(Run(absl::StrCat("ip -n ", ns_, " link set lo up")), 0);
    // Both ends carry packets before any peer starts (a SYN sent earlier
    // may be lost, and its retransmission come after the 5 s connect
    // limit on a loaded machine).
    ASSERT_TRUE(WaitUntilUp("", veth_));
    ASSERT_TRUE(WaitUntilUp(ns_, veth_ + "b"));
    OpenServer();
  }

  // Whether interface `dev` (in namespace `ns`, or here when empty) is
  // operationally UP within 5 s.
  static bool WaitUntilUp(const std::string& ns, const std::string& dev) {
    std::string command =
        absl::StrCat("ip ", ns.empty() ? "" : "-n " + ns + " ",
                     "-br link show dev ", dev, " 2>/dev/null");
    for (int i = 0; i < 500; ++i) {
      FILE* out = popen(command.c_str(), "r");
      char line[256] = {};
      bool up = out != nullptr && fgets(line, sizeof(line), out) != nullptr &&
                strstr(line, " UP ") != nullptr;
      if (out != nullptr) pclose(out);
      if (up) return true;
      usleep(10000);
    }
    return false;
  }

  void TearDown() override {
    peers_.clear();
    EXPECT_EQ(fixtures::CloseObjects(&side_), 0);
    if (made_ns_) {
      Run("ip netns del " + ns_);
      Run("ip link del " + veth_);
    }
  }

  static int Run(const std::string& command) {
    return system((command + " 2>/dev/null").c_str());
  }

  // The server: a tcp RDM endpoint on own_ip_, shm for local peers (the
  // default).
  void OpenServer() {
    unsetenv("FI_TCP_SHM");
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE;
    hints->addr_format = FI_SOCKADDR_IN;
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    int rc = fi_getinfo(FI_VERSION(1, 18), own_ip_.c_str(), nullptr, FI_SOURCE,
                        hints, &side_.info);
    fi_freeinfo(hints);
    ASSERT_EQ(rc, 0);
    fi_av_attr av_attr = {};
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_fabric(side_.info->fabric_attr, &side_.fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(side_.fabric, side_.info, &side_.domain, nullptr), 0);
    ASSERT_EQ(fi_av_open(side_.domain, &av_attr, &side_.av, nullptr), 0);
    ASSERT_EQ(fi_cq_open(side_.domain, &cq_attr, &side_.cq, nullptr), 0);
    ASSERT_EQ(fi_endpoint(side_.domain, side_.info, &side_.ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(side_.ep, &side_.av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(side_.ep, &side_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(side_.ep), 0);
    sockaddr_in name = {};
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&side_.ep->fid, &name, &len), 0);
    port_ = ntohs(name.sin_port);
    ASSERT_NE(FidCast<TcpRdmEp>(side_.ep)->local_path, nullptr);
  }

  // Starts a peer with `id` on `ip`, in the namespace `ns` unless empty,
  // and puts its address in the AV.
  Peer* StartPeer(uint64_t id, const std::string& ns, const std::string& ip,
                  bool crash = false) {
    auto peer = std::make_unique<Peer>();
    peer->id = id;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return nullptr;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    for (int fd : {in[0], in[1], out[0], out[1]}) {
      posix_spawn_file_actions_addclose(&actions, fd);
    }
    char program[PATH_MAX];
    if (realpath(kPeer, program) == nullptr) return nullptr;
    std::vector<std::string> args;
    if (!ns.empty()) args = {"ip", "netns", "exec", ns};
    for (std::string arg :
         {std::string(program), own_ip_, std::to_string(port_), ip,
          std::to_string(id), std::to_string(kCount)}) {
      args.push_back(arg);
    }
    if (crash) args.push_back("--crash");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int rc = posix_spawnp(&peer->pid, argv[0], &actions, nullptr, argv.data(),
                          environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    peer->to = in[1];
    peer->from = fdopen(out[0], "r");
    if (rc != 0) return nullptr;
    char line[128] = {};
    sockaddr_in name = {};
    if (fgets(line, sizeof(line), peer->from) == nullptr ||
        strlen(line) < 2 * sizeof(name)) {
      return nullptr;
    }
    auto* bytes = reinterpret_cast<unsigned char*>(&name);
    for (size_t i = 0; i < sizeof(name); ++i) {
      unsigned value = 0;
      sscanf(line + 2 * i, "%2x", &value);
      bytes[i] = static_cast<unsigned char>(value);
    }
    if (fi_av_insert(side_.av, &name, 1, &peer->addr, 0, nullptr) != 1) {
      return nullptr;
    }
    peers_.push_back(std::move(peer));
    return peers_.back().get();
  }

  static void Go(Peer* peer) { ASSERT_EQ(write(peer->to, "go\n", 3), 3); }

  // Posts a receive of kBuffer bytes for any tagged message.
  void PostReceive() {
    buffers_.push_back(std::make_unique<std::vector<char>>(kBuffer));
    std::vector<char>* buffer = buffers_.back().get();
    ASSERT_EQ(fi_trecv(side_.ep, buffer->data(), buffer->size(), nullptr,
                       FI_ADDR_UNSPEC, 0, ~0ull, buffer),
              0);
  }

  // The next completion within 10 s: 1 with *entry and *source, or the
  // error's negative fi_errno (with *entry's context), or -FI_EAGAIN.
  ssize_t Next(fi_cq_tagged_entry* entry, fi_addr_t* source) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t rc = fi_cq_readfrom(side_.cq, entry, 1, source);
      if (rc == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        fi_cq_readerr(side_.cq, &error, 0);
        entry->op_context = error.op_context;
        return -error.err;
      }
      if (rc != -FI_EAGAIN) return rc;
    }
    return -FI_EAGAIN;
  }

  // Receives `count` messages, checking each against its sender's pattern
  // and order; the number that were.
  size_t ReceiveChecked(size_t count, std::map<fi_addr_t, uint64_t>* next) {
    size_t intact = 0;
    for (size_t i = 0; i < count; ++i) {
      PostReceive();
      fi_cq_tagged_entry entry = {};
      fi_addr_t source = FI_ADDR_NOTAVAIL;
      ssize_t rc = Next(&entry, &source);
      EXPECT_EQ(rc, 1) << fi_strerror(static_cast<int>(-rc));
      if (rc != 1) return intact;
      Peer* from = nullptr;
      for (auto& peer : peers_) {
        if (peer->addr == source) from = peer.get();
      }
      EXPECT_NE(from, nullptr) << "FI_SOURCE " << source;
      if (from == nullptr) return intact;
      EXPECT_EQ(entry.tag, from->id);
      const auto* buffer = static_cast<std::vector<char>*>(entry.op_context);
      uint64_t& seq = (*next)[source];
      if (Intact(buffer->data(), entry.len, from->id, seq)) {
        ++intact;
      } else {
        uint64_t got = 0;
        memcpy(&got, buffer->data(), sizeof(got));
        ADD_FAILURE() << "from peer " << from->id << ": message " << got << " ("
                      << entry.len << " bytes) where " << seq
                      << " was due, or its bytes differ";
      }
      ++seq;
    }
    return intact;
  }

  // Sends "done ID" to `peer` and waits for its completion.
  void SendDone(Peer* peer) {
    std::string done = "done " + std::to_string(peer->id);
    ASSERT_EQ(fi_send(side_.ep, done.c_str(), done.size() + 1, nullptr,
                      peer->addr, nullptr),
              0);
    fi_cq_tagged_entry entry;
    fi_addr_t source;
    ASSERT_EQ(Next(&entry, &source), 1);
    EXPECT_EQ(entry.flags, FI_SEND | FI_MSG);
  }

  std::string ns_, veth_, own_ip_, remote_ip_;
  bool made_ns_ = false;
  uint16_t port_ = 0;
  fixtures::Objects side_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::vector<std::unique_ptr<std::vector<char>>> buffers_;
};

TEST_F(TcpLocalPathProcessesTest, LocalAndRemotePeersOnOneEndpoint) {
  Peer* local = StartPeer(1, "", own_ip_);
  ASSERT_NE(local, nullptr);
  Peer* remote = StartPeer(2, ns_, remote_ip_);
  ASSERT_NE(remote, nullptr);
  Go(local);
  Go(remote);
  std::map<fi_addr_t, uint64_t> next;
  EXPECT_EQ(ReceiveChecked(2 * kCount, &next), 2 * kCount);
  EXPECT_EQ(next[local->addr], kCount);
  EXPECT_EQ(next[remote->addr], kCount);
  SendDone(local);
  SendDone(remote);
  EXPECT_EQ(local->Wait(), 0);
  EXPECT_EQ(remote->Wait(), 0);
  // The local peer came through shm, the remote one over TCP.
  auto* rdm = FidCast<TcpRdmEp>(side_.ep);
  EXPECT_NE(rdm->local_path->Via(local->addr), nullptr);
  EXPECT_EQ(rdm->local_path->Via(remote->addr), nullptr);
}

TEST_F(TcpLocalPathProcessesTest, ALocalPeerThatDiesLeavesNoHang) {
  Peer* dying = StartPeer(3, "", own_ip_, /*crash=*/true);
  ASSERT_NE(dying, nullptr);
  Go(dying);
  std::map<fi_addr_t, uint64_t> next;
  // Its messages before the 1 MiB one arrive whole.
  EXPECT_EQ(ReceiveChecked(kCount / 2, &next), kCount / 2);
  EXPECT_EQ(dying->Wait(), 128 + SIGKILL);
  // The 1 MiB message: whole, or an error completion; a receive it never
  // reached is cancelled.
  PostReceive();
  fi_cq_tagged_entry entry = {};
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  ssize_t rc = Next(&entry, &source);
  if (rc == -FI_EAGAIN) {
    ASSERT_EQ(fi_cancel(&side_.ep->fid, buffers_.back().get()), 0);
    rc = Next(&entry, &source);
    EXPECT_EQ(rc, -FI_ECANCELED);
  } else if (rc == 1) {
    EXPECT_EQ(entry.op_context, buffers_.back().get());
    EXPECT_EQ(entry.len, kBuffer);
    EXPECT_TRUE(Intact(buffers_.back()->data(), entry.len, 3, kCount / 2));
  } else {
    EXPECT_TRUE(rc == -FI_ECONNRESET || rc == -FI_EIO) << rc;
  }
  // A send to the dead peer fails, at once or in its completion.
  rc = fi_send(side_.ep, "x", 2, nullptr, dying->addr, nullptr);
  if (rc == 0) rc = Next(&entry, &source);
  EXPECT_LT(rc, 0);
  EXPECT_NE(rc, -FI_EAGAIN);
  // The endpoint goes on: a new local peer is served whole.
  Peer* fresh = StartPeer(4, "", own_ip_);
  ASSERT_NE(fresh, nullptr);
  Go(fresh);
  EXPECT_EQ(ReceiveChecked(kCount, &next), kCount);
  SendDone(fresh);
  EXPECT_EQ(fresh->Wait(), 0);
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

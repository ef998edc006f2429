// One tcp RDM endpoint (the hub) and 1,000 peer endpoints in 4 child
// processes (rdm_scale_peers): every peer sends the hub a message over a
// connection of its own and the hub answers it on the same connection.
// The soft RLIMIT_NOFILE starts at 1024, less than the hub needs: the
// provider raises it. The peers keep their connections until the hub has
// measured itself: it prints its memory per connection.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/providers/tcp/rdm_scale.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

constexpr uint32_t kPeers = 1000;
constexpr uint32_t kProcesses = 4;
constexpr int kTimeoutMs = 45000;
constexpr size_t kBatch = 64;

long RssKiB() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count - 3;  // ".", ".." and the directory's own fd
}

// The kernel's TCP buffer memory in KiB, system-wide ("mem" of the TCP line
// of /proc/net/sockstat, in pages).
long KernelTcpKiB() {
  std::ifstream sockstat("/proc/net/sockstat");
  std::string line;
  while (std::getline(sockstat, line)) {
    if (line.rfind("TCP:", 0) != 0) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      long pages;
      if (word == "mem" && words >> pages) {
        return pages * (sysconf(_SC_PAGESIZE) / 1024);
      }
    }
  }
  return -1;
}

bool ReadAll(int fd, void* data, size_t len) {
  char* bytes = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = read(fd, bytes, len);
    if (n <= 0) return false;
    bytes += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// A peer process, its stdin (to_child) and stdout (from_child).
struct Child {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
  uint32_t first = 0;
  uint32_t count = 0;
};

// The child processes; those still running at the end are killed.
class Children {
 public:
  ~Children() {
    for (Child& child : children_) {
      if (child.pid > 0) {
        kill(child.pid, SIGKILL);
        waitpid(child.pid, nullptr, 0);
      }
      close(child.to_child);
      close(child.from_child);
    }
  }

  bool Spawn(uint16_t hub_port, uint32_t first, uint32_t count) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return false;
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      close(in[1]);
      return false;
    }
    Child child{-1, in[1], out[0], first, count};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    const char* program = "fabric/providers/tcp/rdm_scale_peers";
    std::string port = std::to_string(hub_port);
    std::string first_text = std::to_string(first);
    std::string count_text = std::to_string(count);
    char* argv[] = {const_cast<char*>(program), port.data(),
                    first_text.data(), count_text.data(), nullptr};
    int rc = posix_spawn(&child.pid, program, &actions, nullptr, argv,
                         environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    children_.push_back(child);
    return rc == 0;
  }

  // The exit status of each child, in order (-1: still running after
  // `timeout_ms` or not a normal exit); `progress` runs between looks.
  std::vector<int> Wait(int timeout_ms, const std::function<void()>& progress) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(timeout_ms);
    std::vector<int> codes(children_.size(), -1);
    size_t running = children_.size();
    while (running > 0 && std::chrono::steady_clock::now() < deadline) {
      progress();
      for (size_t i = 0; i < children_.size(); ++i) {
        int status;
        if (children_[i].pid <= 0 ||
            waitpid(children_[i].pid, &status, WNOHANG) != children_[i].pid) {
          continue;
        }
        children_[i].pid = -1;
        --running;
        if (WIFEXITED(status)) codes[i] = WEXITSTATUS(status);
      }
    }
    return codes;
  }

  std::vector<Child>& all() { return children_; }

 private:
  std::vector<Child> children_;
};

// The hub's side: a receive per peer, and an answer to each message.
class Hub {
 public:
  explicit Hub(uint32_t peers)
      : received_(peers), answers_(peers), got_(peers, false) {}

  ScaleDomain& domain() { return domain_; }
  fid_ep*& ep() { return ep_; }

  void AddPeer(fi_addr_t address, uint32_t index) { index_of_[address] = index; }

  int PostReceives() {
    for (ScaleMessage& slot : received_) {
      int rc = PostWithRetry(
          [&] {
            return fi_recv(ep_, &slot, sizeof(slot), nullptr, FI_ADDR_UNSPEC,
                           &slot);
          },
          [this] { return Drain(); }, kTimeoutMs);
      if (rc != 0) return rc;
    }
    return 0;
  }

  // Takes the CQ's entries and sends the answers they call for; non-zero on
  // an error entry or a bad message.
  int Drain() {
    fi_cq_msg_entry entries[kBatch];
    fi_addr_t sources[kBatch];
    ssize_t n = fi_cq_readfrom(domain_.cq(), entries, kBatch, sources);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error = {};
      fi_cq_readerr(domain_.cq(), &error, 0);
      ADD_FAILURE() << "error entry: " << fi_strerror(error.err);
      return -error.err;
    }
    if (n < 0 && n != -FI_EAGAIN) return static_cast<int>(n);
    for (ssize_t i = 0; i < n; ++i) {
      if (int rc = Take(entries[i], sources[i]); rc != 0) return rc;
    }
    return SendAnswers();
  }

  bool done() const {
    return received_count_ == received_.size() &&
           answered_count_ == answers_.size();
  }
  size_t received_count() const { return received_count_; }
  size_t answered_count() const { return answered_count_; }

 private:
  int Take(const fi_cq_msg_entry& entry, fi_addr_t source) {
    auto* message = static_cast<ScaleMessage*>(entry.op_context);
    if (message >= answers_.data() && message < answers_.data() + answers_.size()) {
      ++answered_count_;
      return 0;
    }
    auto peer = index_of_.find(source);
    if (peer == index_of_.end() || got_[peer->second] ||
        entry.len != sizeof(ScaleMessage) ||
        !IsScaleMessage(*message, peer->second, 0)) {
      ADD_FAILURE() << "bad message from fi_addr " << source << " ("
                    << entry.len << " bytes)";
      return -FI_EIO;
    }
    got_[peer->second] = true;
    ++received_count_;
    answers_[peer->second] = MakeScaleMessage(peer->second, 1);
    unanswered_.emplace_back(source, peer->second);
    return 0;
  }

  // Sends what the transmit queue takes now; the rest at the next Drain.
  int SendAnswers() {
    while (!unanswered_.empty()) {
      auto [address, index] = unanswered_.back();
      ScaleMessage* answer = &answers_[index];
      ssize_t rc = fi_send(ep_, answer, sizeof(*answer), nullptr, address,
                           answer);
      if (rc == -FI_EAGAIN) return 0;
      if (rc != 0) {
        ADD_FAILURE() << "fi_send to peer " << index << ": "
                      << fi_strerror(static_cast<int>(-rc));
        return static_cast<int>(rc);
      }
      unanswered_.pop_back();
    }
    return 0;
  }

  ScaleDomain domain_;
  fid_ep* ep_ = nullptr;
  std::vector<ScaleMessage> received_;  // one receive per peer
  std::vector<ScaleMessage> answers_;   // by peer index
  std::vector<bool> got_;               // by peer index
  std::unordered_map<fi_addr_t, uint32_t> index_of_;
  std::vector<std::pair<fi_addr_t, uint32_t>> unanswered_;
  size_t received_count_ = 0;
  size_t answered_count_ = 0;
};

TEST(TcpRdmScaleTest, HubAnswersEveryPeerOfFourProcesses) {
  const uint32_t peers = kPeers;
  rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < peers + 64) {
    GTEST_SKIP() << "hard RLIMIT_NOFILE " << limit.rlim_max << " < "
                 << peers + 64;
  }
  // The usual default soft limit, which the provider has to raise.
  limit.rlim_cur = std::min<rlim_t>(1024, limit.rlim_max);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  auto start = std::chrono::steady_clock::now();

  Hub hub(peers);
  ASSERT_EQ(hub.domain().Open(), 0);
  sockaddr_in hub_name;
  ASSERT_EQ(hub.domain().OpenEndpoint(&hub.ep(), &hub_name), 0);
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(limit.rlim_cur, limit.rlim_max) << "the provider raised it";

  Children children;
  const uint32_t per_process = peers / kProcesses;
  for (uint32_t p = 0; p < kProcesses; ++p) {
    ASSERT_TRUE(children.Spawn(ntohs(hub_name.sin_port), p * per_process,
                               per_process));
  }
  for (Child& child : children.all()) {
    std::vector<sockaddr_in> names(child.count);
    ASSERT_TRUE(ReadAll(child.from_child, names.data(),
                        names.size() * sizeof(sockaddr_in)))
        << "addresses of peers " << child.first << "..";
    for (uint32_t i = 0; i < child.count; ++i) {
      fi_addr_t address;
      ASSERT_EQ(fi_av_insert(hub.domain().av(), &names[i], 1, &address, 0,
                             nullptr),
                1);
      hub.AddPeer(address, child.first + i);
    }
  }
  ASSERT_EQ(hub.PostReceives(), 0);
  const long rss_before = RssKiB();
  const int fds_before = OpenFds();
  const long kernel_before = KernelTcpKiB();

  for (Child& child : children.all()) {
    ASSERT_EQ(write(child.to_child, "g", 1), 1);
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(kTimeoutMs);
  while (!hub.done() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(hub.Drain(), 0);
  }
  ASSERT_TRUE(hub.done()) << hub.received_count() << " of " << peers
                          << " received, " << hub.answered_count()
                          << " answered";
  // Every peer has its answer; the connections stay until the peers hear
  // from the hub again.
  for (Child& child : children.all()) {
    char done;
    ASSERT_TRUE(ReadAll(child.from_child, &done, 1))
        << "peers " << child.first << ".. did not finish";
  }
  const long rss_after = RssKiB();
  const int fds_after = OpenFds();
  const long kernel_after = KernelTcpKiB();

  for (Child& child : children.all()) {
    ASSERT_EQ(write(child.to_child, "c", 1), 1);
  }
  std::vector<int> codes =
      children.Wait(kTimeoutMs, [&hub] { EXPECT_EQ(hub.Drain(), 0); });
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(codes[i], 0) << "peer process " << i;
  }
  EXPECT_EQ(fi_close(&hub.ep()->fid), 0);
  EXPECT_EQ(hub.domain().Close(), 0);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();

  double per_connection = static_cast<double>(rss_after - rss_before) / peers;
  std::cout << "hub with " << peers << " connections: RSS " << rss_before
            << " -> " << rss_after << " KiB, " << per_connection
            << " KiB per connection; open fds " << fds_before << " -> "
            << fds_after << " (soft RLIMIT_NOFILE " << limit.rlim_cur
            << "); kernel TCP buffers (system-wide, both ends, "
               "/proc/net/sockstat) "
            << kernel_before << " -> " << kernel_after << " KiB; " << seconds
            << " s" << std::endl;
  EXPECT_GE(fds_after - fds_before, static_cast<int>(peers));
  EXPECT_LT(per_connection, 1024.0) << "KiB per connection";
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

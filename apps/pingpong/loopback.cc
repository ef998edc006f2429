#include "apps/pingpong/loopback.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apps/pingpong/fabric_setup.h"

extern char** environ;

namespace pingpong {
namespace {

struct Case {
  std::string provider;
  fi_ep_type ep_type;
};

const char* EpTypeName(fi_ep_type type) {
  switch (type) {
    case FI_EP_MSG: return "msg";
    case FI_EP_RDM: return "rdm";
    case FI_EP_DGRAM: return "dgram";
    default: return nullptr;  // pingpong does not run other types
  }
}

// Every (provider, endpoint type) pair fi_getinfo reports, in its order.
std::vector<Case> FindCases(const Options& options) {
  std::vector<Case> cases;
  fi_info* hints = fi_allocinfo();
  if (!hints) return cases;
  hints->caps = options.tagged ? FI_TAGGED : FI_MSG;
  if (options.ep_type_given) hints->ep_attr->type = options.ep_type;
  if (!options.provider.empty()) {
    hints->fabric_attr->prov_name = strdup(options.provider.c_str());
  }
  fi_info* infos = nullptr;
  int ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &infos);
  fi_freeinfo(hints);
  if (ret) {
    Report("fi_getinfo", ret);
    return cases;
  }
  for (fi_info* info = infos; info; info = info->next) {
    Case found = {info->fabric_attr->prov_name, info->ep_attr->type};
    bool known = false;
    for (const Case& c : cases) {
      known |= c.provider == found.provider && c.ep_type == found.ep_type;
    }
    if (!known && EpTypeName(found.ep_type)) cases.push_back(found);
  }
  fi_freeinfo(infos);
  return cases;
}

// A TCP port on 127.0.0.1 that is free now (the kernel picks it).
uint16_t FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  uint16_t port = 0;
  if (fd >= 0 &&
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

// Starts this program with `args`; its stdout goes to /dev/null when
// `quiet`. Returns the pid, or -1.
pid_t Spawn(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                     O_WRONLY, 0);
  }
  pid_t pid = -1;
  int error = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr,
                          argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error) {
    std::fprintf(stderr, "posix_spawn: %s\n", std::strerror(error));
    return -1;
  }
  return pid;
}

// The exit status of `pid`; after `patience` it is killed first.
int WaitFor(pid_t pid, std::chrono::seconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "pid %d did not finish: stopping it\n", pid);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// One case: the server prints nothing (the client's table is the same
// numbers); both exit 0 on success.
bool RunCase(const Options& options, const Case& c) {
  uint16_t port = FreePort();
  std::vector<std::string> common = {"pingpong", "-p", c.provider, "-e",
                                     EpTypeName(c.ep_type)};
  for (const std::string& arg : TestArguments(options)) common.push_back(arg);
  std::vector<std::string> server = common;
  server.insert(server.end(), {"-B", std::to_string(port)});
  std::vector<std::string> client = common;
  // -6: the client names the server by the IPv6 loopback address.
  const char* host = options.ipv6 ? "::1" : "127.0.0.1";
  client.insert(client.end(), {"-P", std::to_string(port), host});

  pid_t server_pid = Spawn(server, /*quiet=*/true);
  if (server_pid < 0) return false;
  pid_t client_pid = Spawn(client, /*quiet=*/false);
  int client_status = client_pid < 0 ? -1
                                     : WaitFor(client_pid, std::chrono::seconds(300));
  // A server whose client failed early may wait in accept(): not for long.
  int server_status = WaitFor(
      server_pid, std::chrono::seconds(client_status == 0 ? 30 : 2));
  return client_status == 0 && server_status == 0;
}

}  // namespace

int RunLoopback(const Options& options) {
  std::vector<Case> cases = FindCases(options);
  if (cases.empty()) {
    std::fprintf(stderr, "pingpong: no provider offers these endpoints\n");
    return -FI_ENODATA;
  }
  int failures = 0;
  for (const Case& c : cases) {
    std::printf("== provider %s, endpoint %s ==\n", c.provider.c_str(),
                EpTypeName(c.ep_type));
    std::fflush(stdout);  // before the client writes to the same stdout
    if (!RunCase(options, c)) {
      std::printf("FAILED: provider %s, endpoint %s\n", c.provider.c_str(),
                  EpTypeName(c.ep_type));
      failures++;
    }
  }
  std::printf("%zu of %zu cases passed\n", cases.size() - failures,
              cases.size());
  return failures ? -FI_EOTHER : 0;
}

}  // namespace pingpong

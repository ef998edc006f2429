// The hub of shm_many_peers_test: a process whose fd limit (soft and hard)
// is LIMIT opens one shm RDM endpoint and sends one 8-byte message to each
// peer address read from stdin (a sockaddr_in as hex, one per line), then
// waits for every send's completion. Prints "sent N" and exits 0, or
// prints why it stopped (the peer's number and the error) and exits 1.
// With --exhaust it first uses up every fd left once its endpoint is open.
//
// Usage: shm_fd_limited_hub LIMIT [--exhaust] < addresses
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vector>

#include "fabric/fixtures/loopback.h"

namespace {

// The fds --exhaust took, given back before the process ends (a
// sanitizer's exit checks need some).
std::vector<int> exhausting;

int Fail(const char* what, size_t peer, ssize_t rc) {
  printf("%s at peer %zu: %s (%zd)\n", what, peer,
         fi_strerror(static_cast<int>(rc < 0 ? -rc : rc)), rc);
  fflush(stdout);
  for (int fd : exhausting) close(fd);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool exhaust = argc == 3 && strcmp(argv[2], "--exhaust") == 0;
  if (argc != 2 && !exhaust) {
    fprintf(stderr, "usage: shm_fd_limited_hub LIMIT [--exhaust] < addresses\n");
    return 2;
  }
  rlim_t limit = strtoul(argv[1], nullptr, 10);
  rlimit lowered = {limit, limit};
  if (setrlimit(RLIMIT_NOFILE, &lowered) != 0) return Fail("setrlimit", 0, 0);
  std::vector<sockaddr_in> peers;
  char line[128];
  while (fgets(line, sizeof(line), stdin) != nullptr) {
    sockaddr_in peer = {};
    if (!fabric::fixtures::FromHex(line, &peer, sizeof(peer))) {
      return Fail("address", 0, 0);
    }
    peers.push_back(peer);
  }
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("shm");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) return Fail("fi_getinfo", 0, rc);
  fabric::fixtures::Objects rdm;
  if ((rc = fabric::fixtures::OpenRdmEndpoint(info, FI_CQ_FORMAT_MSG, &rdm)) !=
      0) {
    return Fail("setup", 0, rc);
  }
  while (exhaust) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    exhausting.push_back(fd);
  }
  uint64_t message = 0x6875622d746f2d70;  // "p-ot-buh"
  size_t done = 0;
  for (size_t i = 0; i < peers.size(); ++i) {
    fi_addr_t addr;
    if (fi_av_insert(rdm.av, &peers[i], 1, &addr, 0, nullptr) != 1) {
      return Fail("fi_av_insert", i, -FI_EINVAL);
    }
    ssize_t sent;
    while ((sent = fi_send(rdm.ep, &message, sizeof(message), nullptr, addr,
                           nullptr)) == -FI_EAGAIN) {
      ssize_t got = fabric::fixtures::PollOne(rdm.cq);
      if (got < 0) return Fail("send completion", done, got);
      done += static_cast<size_t>(got);
    }
    if (sent != 0) return Fail("fi_send", i, sent);
  }
  while (done < peers.size()) {
    ssize_t got = fabric::fixtures::PollOne(rdm.cq);
    if (got < 0) return Fail("send completion", done, got);
    done += static_cast<size_t>(got);
  }
  printf("sent %zu\n", done);
  fabric::fixtures::CloseObjects(&rdm);
  fi_freeinfo(info);
  return 0;
}

// A tcp RDM client process for tcp_local_path_processes_test: opens an
// endpoint on OWN_IP, prints its address (a sockaddr_in, as hex) on one
// line, waits for a line on stdin, then sends COUNT tagged messages (tag
// ID; sizes 64 B, 4 KiB and 64 KiB in turn; each starting with its
// sequence number, the rest a pattern of ID and sequence) to SERVER_IP:PORT
// and waits for the server's untagged "done ID". Exits 0 after that, 1 on
// an error (printed to stderr). With --crash, once the first half of the
// messages completed, it kills itself with SIGKILL right after posting a
// 1 MiB message.
//
// Usage: local_path_peer SERVER_IP PORT OWN_IP ID COUNT [--crash]
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"

namespace {

int Fail(const char* what, int rc) {
  fprintf(stderr, "local_path_peer: %s: %s\n", what, fi_strerror(-rc));
  return 1;
}

// The message with sequence number `seq` from peer `id`.
std::vector<char> Message(uint64_t id, uint64_t seq, size_t size) {
  std::vector<char> data(size);
  for (size_t i = 0; i < size; ++i) {
    data[i] = static_cast<char>(id * 131 + seq * 7 + i);
  }
  memcpy(data.data(), &seq, sizeof(seq));
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  bool crash = argc == 7 && strcmp(argv[6], "--crash") == 0;
  if (argc != 6 && !crash) {
    fprintf(stderr,
            "usage: local_path_peer SERVER_IP PORT OWN_IP ID COUNT "
            "[--crash]\n");
    return 2;
  }
  sockaddr_in server = {};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(atoi(argv[2])));
  uint64_t id = strtoull(argv[4], nullptr, 10);
  size_t count = strtoull(argv[5], nullptr, 10);
  if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1) return 2;

  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  fi_info* info = nullptr;
  int rc =
      fi_getinfo(FI_VERSION(1, 18), argv[3], nullptr, FI_SOURCE, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) return Fail("fi_getinfo", rc);
  fabric::fixtures::Objects rdm;
  if ((rc = fabric::fixtures::OpenRdmEndpoint(info, FI_CQ_FORMAT_TAGGED,
                                              &rdm)) != 0) {
    return Fail("opening the endpoint", rc);
  }
  fid_av* av = rdm.av;
  fid_cq* cq = rdm.cq;
  fid_ep* ep = rdm.ep;
  sockaddr_in own = {};
  size_t len = sizeof(own);
  if ((rc = fi_getname(&ep->fid, &own, &len)) != 0) {
    return Fail("fi_getname", rc);
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(&own);
  for (size_t i = 0; i < sizeof(own); ++i) printf("%02x", bytes[i]);
  printf("\n");
  fflush(stdout);
  char go[16];
  if (fgets(go, sizeof(go), stdin) == nullptr) return 1;

  fi_addr_t to_server = FI_ADDR_UNSPEC;
  if (fi_av_insert(av, &server, 1, &to_server, 0, nullptr) != 1) {
    return Fail("fi_av_insert", -FI_EINVAL);
  }
  char done[16] = {};
  if ((rc = static_cast<int>(fi_recv(ep, done, sizeof(done), nullptr,
                                     FI_ADDR_UNSPEC, done))) != 0) {
    return Fail("fi_recv", rc);
  }
  const size_t sizes[] = {64, 4096, 65536};
  std::vector<std::vector<char>> sent;
  for (uint64_t seq = 0; seq < count; ++seq) {
    bool big = crash && seq == count / 2;
    if (big && (rc = fabric::fixtures::ReapCompletions(cq, seq)) != 0)
      return Fail("completions", rc);
    sent.push_back(Message(id, seq, big ? (1 << 20) : sizes[seq % 3]));
    for (;;) {
      rc = static_cast<int>(fi_tsend(ep, sent.back().data(), sent.back().size(),
                                     nullptr, to_server, id, nullptr));
      if (rc != -FI_EAGAIN) break;
      fi_cq_read(cq, nullptr, 0);
    }
    if (rc != 0) return Fail("fi_tsend", rc);
    if (big) kill(getpid(), SIGKILL);
  }
  // The sends' completions and "done": count + 1 entries.
  if ((rc = fabric::fixtures::ReapCompletions(cq, count + 1)) != 0)
    return Fail("completions", rc);
  if (std::string(done) != "done " + std::to_string(id)) {
    fprintf(stderr, "local_path_peer: got '%s'\n", done);
    return 1;
  }
  fabric::fixtures::CloseObjects(&rdm);
  fi_freeinfo(info);
  printf("ok\n");
  return 0;
}

// A tcp MSG client process for the fault tests: connects to the passive
// endpoint at ADDRESS:PORT, starts sending a 256 MiB message (one 64 MiB
// buffer four times over, more than the sockets' buffers hold), and kills
// itself with SIGKILL while the message is on the way.
//
// Usage: peer_client ADDRESS PORT
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "fabric/fixtures/loopback.h"

namespace {

int Fail(const char* what, int rc) {
  fprintf(stderr, "peer_client: %s: %s\n", what, fi_strerror(-rc));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ADDRESS PORT\n", argv[0]);
    return 2;
  }
  sockaddr_in server = {};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(atoi(argv[2])));
  if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1) return 2;

  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->dest_addr = malloc(sizeof(server));
  memcpy(hints->dest_addr, &server, sizeof(server));
  hints->dest_addrlen = sizeof(server);
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  if (rc != 0) return Fail("fi_getinfo", rc);
  // Left open: the process ends killed.
  fabric::fixtures::Objects client;
  fi_eq_attr eq_attr = {};
  fi_cq_attr cq_attr = {};
  constexpr uint64_t kBothWays = FI_TRANSMIT | FI_RECV;
  if ((rc = fi_fabric(info->fabric_attr, &client.fabric, nullptr)) != 0 ||
      (rc = fi_eq_open(client.fabric, &eq_attr, &client.eq, nullptr)) != 0 ||
      (rc = fi_domain(client.fabric, info, &client.domain, nullptr)) != 0 ||
      (rc = fi_cq_open(client.domain, &cq_attr, &client.cq, nullptr)) != 0 ||
      (rc = fi_endpoint(client.domain, info, &client.ep, nullptr)) != 0 ||
      (rc = fi_ep_bind(client.ep, &client.eq->fid, 0)) != 0 ||
      (rc = fi_ep_bind(client.ep, &client.cq->fid, kBothWays)) != 0 ||
      (rc = fi_enable(client.ep)) != 0 ||
      (rc = fi_connect(client.ep, &server, nullptr, 0)) != 0) {
    return Fail("setting up", rc);
  }
  fi_eq_cm_entry entry;
  uint32_t event = 0;
  ssize_t read;
  do {
    read = fi_eq_read(client.eq, &event, &entry, sizeof(entry), 0);
  } while (read == -FI_EAGAIN);
  if (read < 0 || event != FI_CONNECTED) return Fail("connecting", -FI_EIO);

  static std::vector<char> buffer(64 << 20, 'k');
  iovec iov[4];
  for (iovec& piece : iov) piece = {buffer.data(), buffer.size()};
  if ((rc = static_cast<int>(
           fi_sendv(client.ep, iov, nullptr, 4, 0, nullptr))) != 0) {
    return Fail("fi_sendv", rc);
  }
  kill(getpid(), SIGKILL);
  return 3;
}

// FI_THREAD_DOMAIN with manual progress drops the endpoints' locks: the
// application serializes calls per domain, and the library must never touch
// an endpoint from a call on another domain or on an EQ. Two threads each
// drive their own pair of domains (client and server) while a third reads
// the EQs; under --config=tsan any access across those lines is a report.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace fabric {
namespace {

constexpr int kIterations = 2000;

fi_info* Hints() {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  return hints;
}

// One side of a connection: its own domain and CQ.
struct End {
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;

  void Open(fid_fabric* fabric, fi_info* info, fid_eq* eq) {
    ASSERT_EQ(fi_domain(fabric, info, &domain, nullptr), 0);
    fi_cq_attr attr = {};
    attr.format = FI_CQ_FORMAT_CONTEXT;
    ASSERT_EQ(fi_cq_open(domain, &attr, &cq, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain, info, &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(ep), 0);
  }
  void Close() {
    for (fid* object : {&ep->fid, &cq->fid, &domain->fid}) {
      EXPECT_EQ(fi_close(object), 0);
    }
  }
  // Waits for one completion, advancing only this domain.
  bool Wait() {
    fi_cq_entry entry;
    for (;;) {
      ssize_t rc = fi_cq_read(cq, &entry, 1);
      if (rc == 1) return true;
      if (rc != -FI_EAGAIN) return false;
    }
  }
};

// Reads `eq` until an event arrives, advancing `other` (the peer's fabric,
// whose handshake may be what the event waits for) meanwhile.
uint32_t WaitEvent(fid_eq* eq, fi_eq_cm_entry* entry, fid_fabric* other) {
  uint32_t event = 0;
  while (fi_eq_read(eq, &event, entry, sizeof(*entry), 0) < 0) {
    fi_trywait(other, nullptr, 0);
  }
  return event;
}

TEST(TcpThreadingTest, DomainsDrivenByTheirOwnThreadsNeverMeet) {
  fi_info* hints = Hints();
  fi_info* pep_info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), "127.0.0.1", "0", FI_SOURCE, hints,
                       &pep_info),
            0);
  ASSERT_EQ(pep_info->domain_attr->threading, FI_THREAD_DOMAIN);
  fid_fabric* server_fabric;
  fid_eq* server_eq;
  fid_pep* pep;
  fi_eq_attr eq_attr = {};
  ASSERT_EQ(fi_fabric(pep_info->fabric_attr, &server_fabric, nullptr), 0);
  ASSERT_EQ(fi_eq_open(server_fabric, &eq_attr, &server_eq, nullptr), 0);
  ASSERT_EQ(fi_passive_ep(server_fabric, pep_info, &pep, nullptr), 0);
  ASSERT_EQ(fi_pep_bind(pep, &server_eq->fid, 0), 0);
  ASSERT_EQ(fi_listen(pep), 0);
  sockaddr_in name;
  size_t len = sizeof(name);
  ASSERT_EQ(fi_getname(&pep->fid, &name, &len), 0);

  hints->dest_addr = malloc(len);
  memcpy(hints->dest_addr, &name, len);
  hints->dest_addrlen = len;
  fi_info* client_info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints,
                       &client_info),
            0);
  fid_fabric* client_fabric;
  fid_eq* client_eq;
  ASSERT_EQ(fi_fabric(client_info->fabric_attr, &client_fabric, nullptr), 0);
  ASSERT_EQ(fi_eq_open(client_fabric, &eq_attr, &client_eq, nullptr), 0);

  // Two connections, each end in a domain of its own.
  End clients[2], servers[2];
  std::vector<fi_info*> requests;
  for (int i = 0; i < 2; ++i) {
    clients[i].Open(client_fabric, client_info, client_eq);
    ASSERT_EQ(fi_connect(clients[i].ep, &name, nullptr, 0), 0);
    fi_eq_cm_entry entry;
    ASSERT_EQ(WaitEvent(server_eq, &entry, client_fabric), FI_CONNREQ);
    requests.push_back(entry.info);
    servers[i].Open(server_fabric, entry.info, server_eq);
    ASSERT_EQ(fi_accept(servers[i].ep, nullptr, 0), 0);
    ASSERT_EQ(WaitEvent(server_eq, &entry, client_fabric), FI_CONNECTED);
    ASSERT_EQ(WaitEvent(client_eq, &entry, server_fabric), FI_CONNECTED);
  }

  // Each thread ping-pongs over its own pair of domains; a third keeps
  // reading both EQs, which are fabric objects any thread may use.
  std::atomic<bool> done{false};
  std::thread eq_reader([&] {
    fi_eq_cm_entry entry;
    uint32_t event;
    while (!done.load()) {
      fi_eq_read(server_eq, &event, &entry, sizeof(entry), FI_PEEK);
      fi_eq_read(client_eq, &event, &entry, sizeof(entry), FI_PEEK);
    }
  });
  std::atomic<int> failures{0};
  auto pingpong = [&](int i) {
    char out[64] = "ping", in[64];
    for (int n = 0; n < kIterations; ++n) {
      if (fi_recv(servers[i].ep, in, sizeof(in), nullptr, 0, nullptr) != 0 ||
          fi_send(clients[i].ep, out, sizeof(out), nullptr, 0, nullptr) != 0 ||
          !clients[i].Wait() || !servers[i].Wait() ||
          fi_recv(clients[i].ep, in, sizeof(in), nullptr, 0, nullptr) != 0 ||
          fi_send(servers[i].ep, out, sizeof(out), nullptr, 0, nullptr) != 0 ||
          !servers[i].Wait() || !clients[i].Wait()) {
        ++failures;
        return;
      }
    }
  };
  std::thread first(pingpong, 0), second(pingpong, 1);
  first.join();
  second.join();
  done.store(true);
  eq_reader.join();
  EXPECT_EQ(failures.load(), 0);

  for (int i = 0; i < 2; ++i) {
    clients[i].Close();
    servers[i].Close();
    fi_freeinfo(requests[i]);
  }
  for (fid* object : {&pep->fid, &server_eq->fid, &server_fabric->fid,
                      &client_eq->fid, &client_fabric->fid}) {
    EXPECT_EQ(fi_close(object), 0);
  }
  fi_freeinfo(client_info);
  fi_freeinfo(pep_info);
  fi_freeinfo(hints);
}

}  // namespace
}  // namespace fabric

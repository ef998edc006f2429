// File: fabric/providers/tcp/tcp_rdm_testing.h
//
// For the tcp RDM tests (tcp_rdm_test.cc): two RDM endpoints on one
// loopback domain and AV, each with its own CQs, and what the tests check
// them with (payloads that name their sender and index, the TCP
// connections between two ports).
#ifndef FABRIC_PROVIDERS_TCP_TCP_RDM_TESTING_H_
#define FABRIC_PROVIDERS_TCP_TCP_RDM_TESTING_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "fabric/fixtures/av_pair_test.h"
#include "fabric/fixtures/loopback.h"
#include "fabric/providers/tcp/tcp_rdm_ep.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp_rdm_testing {

// The ESTABLISHED TCP sockets with one end on `port_a` or `port_b` (both
// ends of a connection count), from /proc/net/tcp.
inline int EstablishedSocketsOn(uint16_t port_a, uint16_t port_b) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // column names
  int count = 0;
  while (std::getline(table, line)) {
    unsigned local_port = 0, remote_port = 0, state = 0;
    if (sscanf(line.c_str(), " %*d: %*8s:%x %*8s:%x %x", &local_port,
               &remote_port, &state) != 3) {
      continue;
    }
    constexpr unsigned kEstablished = 1;
    bool ours = local_port == port_a || local_port == port_b ||
                remote_port == port_a || remote_port == port_b;
    if (state == kEstablished && ours) ++count;
  }
  return count;
}

// Message `index` from endpoint `side`: its length and every byte follow
// from the two numbers.
inline std::vector<char> Payload(int side, int index) {
  std::vector<char> data(8 + (index * 37) % 2000);
  for (size_t j = 0; j < data.size(); ++j) {
    data[j] = static_cast<char>(side * 131 + index * 7 + j * 13);
  }
  memcpy(data.data(), &index, sizeof(index));
  return data;
}

using RdmEnd = fixtures::AvEndpoint;

class TcpRdmTest : public fixtures::AvPairTest {
 protected:
  void SetUp() override {
    OpenPair(
        FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SOURCE | FI_SOURCE_ERR |
            FI_DIRECTED_RECV,
        [this](fi_info* hints) {
          hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
          hints->domain_attr->av_type = FI_AV_TABLE;
          hints->domain_attr->data_progress = data_progress_;
        },
        Options(nullptr));
  }

  // Opens `end` at `name` (already in the AV), or at a fresh address it
  // inserts into the AV.
  void Open(RdmEnd* end, const sockaddr_in* name = nullptr) {
    OpenEnd(end, Options(name));
  }

  fixtures::AvEndpointOptions Options(const sockaddr_in* name) const {
    fixtures::AvEndpointOptions options;
    options.cq_wait = cq_wait_;
    options.separate_cqs = true;
    options.name = name;
    options.name_len = sizeof(*name);
    return options;
  }

  static sockaddr_in Name(const RdmEnd& end) {
    sockaddr_in name = {};
    size_t len = sizeof(name);
    EXPECT_EQ(fi_getname(&end.ep->fid, &name, &len), 0);
    return name;
  }

  // Both endpoints send first at the same moment (both sends before any
  // progress when progress is manual), then several hundred messages each,
  // interleaved: one connection stays between them, and every message
  // arrives whole and in order, without error entries.
  void ExchangeFromBothSidesAtOnce() {
    constexpr int kMessages = 300;
    ASSERT_GE(loopback_.info->rx_attr->size, static_cast<size_t>(kMessages));
    uint16_t port_a = ntohs(Name(a_).sin_port);
    uint16_t port_b = ntohs(Name(b_).sin_port);
    ASSERT_EQ(EstablishedSocketsOn(port_a, port_b), 0);
    RdmEnd* ends[2] = {&a_, &b_};
    std::vector<std::vector<char>> in[2], out[2];
    std::vector<int> contexts[2];
    for (int side = 0; side < 2; ++side) {
      in[side].assign(kMessages, std::vector<char>(2048));
      contexts[side].resize(kMessages);
      for (int i = 0; i < kMessages; ++i) {
        out[side].push_back(Payload(side, i));
        ASSERT_EQ(
            fi_recv(ends[side]->ep, in[side][i].data(), in[side][i].size(),
                    nullptr, FI_ADDR_UNSPEC, &contexts[side][i]),
            0);
      }
    }
    // Both first sends connect before either endpoint makes progress.
    ASSERT_EQ(fi_send(a_.ep, out[0][0].data(), out[0][0].size(), nullptr,
                      b_.addr, nullptr),
              0);
    ASSERT_EQ(fi_send(b_.ep, out[1][0].data(), out[1][0].size(), nullptr,
                      a_.addr, nullptr),
              0);
    int sent[2] = {0, 0};
    for (int i = 1; i < kMessages; ++i) {
      for (int side = 0; side < 2; ++side) {
        fi_addr_t dest = ends[1 - side]->addr;
        ssize_t rc;
        while ((rc = fi_send(ends[side]->ep, out[side][i].data(),
                             out[side][i].size(), nullptr, dest, nullptr)) ==
               -FI_EAGAIN) {
          for (int s = 0; s < 2; ++s) {
            int drained = DrainTx(ends[s]->cq);
            ASSERT_GE(drained, 0);
            sent[s] += drained;
          }
        }
        ASSERT_EQ(rc, 0);
      }
    }
    fi_cq_tagged_entry entry;
    for (int side = 0; side < 2; ++side) {
      while (sent[side] < kMessages) {
        ASSERT_EQ(Wait(ends[side]->cq, &entry), 1);
        ++sent[side];
      }
    }
    for (int side = 0; side < 2; ++side) {
      for (int i = 0; i < kMessages; ++i) {
        ASSERT_EQ(Wait(ends[side]->rx_cq, &entry), 1);
        ASSERT_EQ(entry.op_context, &contexts[side][i]);  // in posting order
        const std::vector<char>& expected = out[1 - side][i];
        ASSERT_EQ(entry.len, expected.size());
        ASSERT_EQ(memcmp(in[side][i].data(), expected.data(), expected.size()),
                  0)
            << "message " << i << " to side " << side;
      }
    }
    for (RdmEnd* end : ends) {
      EXPECT_EQ(fi_cq_read(end->cq, &entry, 1), -FI_EAGAIN);
      EXPECT_EQ(fi_cq_read(end->rx_cq, &entry, 1), -FI_EAGAIN);
    }
    EXPECT_EQ(EstablishedSocketsOn(port_a, port_b), 2);  // one connection
  }

  // `from` sends `text` to `dest`, where `to` receives it: both complete,
  // and `to` reports `from`'s AV address as the source.
  void ExpectDelivered(const RdmEnd& from, fi_addr_t dest, const RdmEnd& to,
                       const char* text) {
    char in[64] = {};
    ASSERT_EQ(fi_recv(to.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
              0);
    int context;
    ASSERT_EQ(fi_send(from.ep, text, strlen(text) + 1, nullptr, dest, &context),
              0);
    fi_cq_tagged_entry entry;
    ASSERT_EQ(Wait(from.cq, &entry), 1);
    EXPECT_EQ(entry.op_context, &context);
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(Wait(to.rx_cq, &entry, &source), 1);
    EXPECT_STREQ(in, text);
    EXPECT_EQ(source, from.addr);
  }

  // A plain TCP socket listening on 127.0.0.1 (its address in *name) with
  // `backlog`, or -1.
  static int LoopbackListener(int backlog, sockaddr_in* name) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    *name = {};
    name->sin_family = AF_INET;
    name->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(*name);
    if (listener < 0 ||
        bind(listener, reinterpret_cast<sockaddr*>(name), len) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(name), &len) != 0 ||
        listen(listener, backlog) != 0) {
      if (listener >= 0) close(listener);
      return -1;
    }
    return listener;
  }

  // The next entry of `tx_cq` is transmit `context` failing with
  // FI_ECONNREFUSED.
  void ExpectRefused(fid_cq* tx_cq, void* context) {
    fi_cq_tagged_entry entry;
    ASSERT_EQ(Wait(tx_cq, &entry), -FI_EAVAIL);
    fi_cq_err_entry error = {};
    ASSERT_EQ(fi_cq_readerr(tx_cq, &error, 0), 1);
    EXPECT_EQ(error.err, FI_ECONNREFUSED);
    EXPECT_EQ(error.op_context, context);
  }

  // Reads `cq` (advancing both endpoints) until it holds nothing more; the
  // entries read, or -1 after an error entry.
  int DrainTx(fid_cq* cq) {
    int read = 0;
    fi_cq_tagged_entry entry;
    for (;;) {
      ssize_t rc = fi_cq_read(cq, &entry, 1);
      if (rc == -FI_EAGAIN) return read;
      if (rc != 1) return -1;
      ++read;
    }
  }

  fi_progress data_progress_ = FI_PROGRESS_UNSPEC;  // the provider's default
  fi_wait_obj cq_wait_ = FI_WAIT_NONE;
};

}  // namespace tcp_rdm_testing
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_RDM_TESTING_H_

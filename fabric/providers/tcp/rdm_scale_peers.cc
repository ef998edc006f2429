// Peer processes of tcp_rdm_scale_test: many RDM endpoints in one process
// talking to one hub endpoint.
//
// Usage: rdm_scale_peers HUB_PORT FIRST COUNT
// Opens COUNT endpoints (peer indexes FIRST..FIRST+COUNT-1) on 127.0.0.1,
// writes their addresses to stdout (COUNT sockaddr_in, in index order),
// waits for one byte on stdin, then every endpoint sends the hub at
// 127.0.0.1:HUB_PORT its ScaleMessage and receives the hub's answer. Then
// writes one byte to stdout and keeps its connections until one more byte
// comes on stdin (the hub measures itself meanwhile). Exits 0 when every
// send completed and every answer came intact from the hub, with no error
// entry; otherwise says why on stderr and exits 1.
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <unordered_map>
#include <vector>

#include "fabric/providers/tcp/rdm_scale.h"

namespace fabric {
namespace tcp {
namespace {

constexpr int kTimeoutMs = 40000;
constexpr size_t kBatch = 64;

struct Peer {
  uint32_t index = 0;
  fid_ep* ep = nullptr;
  ScaleMessage request = {};
  ScaleMessage answer = {};
  bool sent = false;
  bool answered = false;
};

class PeerProcess {
 public:
  PeerProcess(uint32_t first, uint32_t count) : peers_(count) {
    for (uint32_t i = 0; i < count; ++i) peers_[i].index = first + i;
  }

  int Run(uint16_t hub_port) {
    if (int rc = domain_.Open(); rc != 0) return rc;
    std::vector<sockaddr_in> names(peers_.size());
    for (size_t i = 0; i < peers_.size(); ++i) {
      if (int rc = domain_.OpenEndpoint(&peers_[i].ep, &names[i]); rc != 0) {
        return rc;
      }
    }
    sockaddr_in hub = {};
    hub.sin_family = AF_INET;
    hub.sin_port = htons(hub_port);
    hub.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fi_av_insert(domain_.av(), &hub, 1, &hub_, 0, nullptr) != 1) {
      fprintf(stderr, "fi_av_insert of the hub failed\n");
      return -FI_EINVAL;
    }
    if (!WriteAll(names.data(), names.size() * sizeof(sockaddr_in))) {
      return -FI_EIO;
    }
    char go;
    if (read(STDIN_FILENO, &go, 1) != 1) {
      fprintf(stderr, "no go from the hub\n");
      return -FI_EIO;
    }
    for (Peer& peer : peers_) {
      if (int rc = Start(&peer); rc != 0) return rc;
    }
    if (int rc = WaitForAll(); rc != 0) return rc;
    char close_now;
    if (!WriteAll("d", 1) || read(STDIN_FILENO, &close_now, 1) != 1) {
      fprintf(stderr, "no word to close from the hub\n");
      return -FI_EIO;
    }
    return 0;
  }

  int Close() {
    int rc = 0;
    for (Peer& peer : peers_) {
      if (peer.ep != nullptr && fi_close(&peer.ep->fid) != 0) rc = -FI_EIO;
    }
    int closed = domain_.Close();
    return rc != 0 ? rc : closed;
  }

 private:
  static bool WriteAll(const void* data, size_t len) {
    const char* bytes = static_cast<const char*>(data);
    while (len > 0) {
      ssize_t n = write(STDOUT_FILENO, bytes, len);
      if (n <= 0) {
        perror("writing the addresses");
        return false;
      }
      bytes += n;
      len -= static_cast<size_t>(n);
    }
    return true;
  }

  // Posts the receive for the answer, then sends the request.
  int Start(Peer* peer) {
    peer->request = MakeScaleMessage(peer->index, 0);
    contexts_[&peer->request] = peer;
    contexts_[&peer->answer] = peer;
    auto progress = [this] { return Drain(); };
    int rc = PostWithRetry(
        [peer] {
          return fi_recv(peer->ep, &peer->answer, sizeof(peer->answer),
                         nullptr, FI_ADDR_UNSPEC, &peer->answer);
        },
        progress, kTimeoutMs);
    if (rc != 0) return rc;
    return PostWithRetry(
        [peer, this] {
          return fi_send(peer->ep, &peer->request, sizeof(peer->request),
                         nullptr, hub_, &peer->request);
        },
        progress, kTimeoutMs);
  }

  // Takes what the CQ holds; non-zero on an error entry or a bad answer.
  int Drain() {
    fi_cq_msg_entry entries[kBatch];
    fi_addr_t sources[kBatch];
    ssize_t n = fi_cq_readfrom(domain_.cq(), entries, kBatch, sources);
    if (n == -FI_EAGAIN) return 0;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error = {};
      fi_cq_readerr(domain_.cq(), &error, 0);
      fprintf(stderr, "error entry: %s\n", fi_strerror(error.err));
      return -error.err;
    }
    if (n < 0) {
      fprintf(stderr, "fi_cq_readfrom: %s\n", fi_strerror(static_cast<int>(-n)));
      return static_cast<int>(n);
    }
    for (ssize_t i = 0; i < n; ++i) {
      Peer* peer = contexts_.at(entries[i].op_context);
      if (entries[i].op_context == &peer->request) {
        peer->sent = true;
        ++sent_;
        continue;
      }
      if (sources[i] != hub_ || entries[i].len != sizeof(ScaleMessage) ||
          !IsScaleMessage(peer->answer, peer->index, 1)) {
        fprintf(stderr, "peer %u: bad answer (source %llu, %zu bytes)\n",
                peer->index, static_cast<unsigned long long>(sources[i]),
                entries[i].len);
        return -FI_EIO;
      }
      peer->answered = true;
      ++answered_;
    }
    return 0;
  }

  int WaitForAll() {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(kTimeoutMs);
    while (sent_ < peers_.size() || answered_ < peers_.size()) {
      if (int rc = Drain(); rc != 0) return rc;
      if (std::chrono::steady_clock::now() > deadline) {
        fprintf(stderr, "timed out: %zu of %zu sent, %zu answered\n", sent_,
                peers_.size(), answered_);
        return -FI_ETIMEDOUT;
      }
    }
    return 0;
  }

  ScaleDomain domain_;
  std::vector<Peer> peers_;
  std::unordered_map<void*, Peer*> contexts_;
  fi_addr_t hub_ = FI_ADDR_NOTAVAIL;
  size_t sent_ = 0;
  size_t answered_ = 0;
};

}  // namespace
}  // namespace tcp
}  // namespace fabric

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s HUB_PORT FIRST COUNT\n", argv[0]);
    return 2;
  }
  fabric::tcp::PeerProcess process(static_cast<uint32_t>(atoi(argv[2])),
                                   static_cast<uint32_t>(atoi(argv[3])));
  int rc = process.Run(static_cast<uint16_t>(atoi(argv[1])));
  int closed = process.Close();
  if (rc != 0 || closed != 0) {
    fprintf(stderr, "rdm_scale_peers %s %s: %s\n", argv[2], argv[3],
            fi_strerror(-(rc != 0 ? rc : closed)));
    return 1;
  }
  return 0;
}

// bench:rma's program: the bandwidth of windowed RMA reads or writes, or of
// windowed messages, between two processes on this host over whichever
// libfabric.so.1 the loader finds first (ours or Debian's 1.17).
//
//   rma_window read|write|send PROVIDER SIZE WINDOW ITERATIONS
//              [TARGET_CPU,INITIATOR_CPU]
//
// The process forks: the initiator issues WINDOW operations of SIZE bytes
// (fi_read or fi_write into the target's registered buffer; fi_send into
// receives the target posted), waits for their completions, and does that
// ITERATIONS times after ITERATIONS / 10 + 1 untimed windows. The target
// only drives progress (manual progress: its reads of its CQ) and, for
// send, reposts its receives. Both sides learn each other's endpoint name,
// buffer address and key over a socketpair. Prints the initiator's
// "GB_PER_SEC" (10^9 bytes), or exits 1 with a message on any failure.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/pin_cpu.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rma_window (%d): %s\n", getpid(), what.c_str());
  std::exit(1);
}

void Check(int rc, const char* call) {
  if (rc != 0) Die(std::string(call) + ": " + fi_strerror(-rc));
}

void Pin(int cpu) {
  if (!PinToCpu(cpu)) Die("sched_setaffinity");
}

enum class Mode { kRead, kWrite, kSend };

// What each side tells the other.
struct Card {
  char name[128];
  size_t name_len;
  uint64_t addr;  // the buffer as the peer names it in RMA
  uint64_t key;
};

void SendAll(int fd, const void* data, size_t size) {
  if (write(fd, data, size) != static_cast<ssize_t>(size)) Die("write card");
}

void ReceiveAll(int fd, void* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, static_cast<char*>(data) + got, size - got);
    if (n <= 0) Die("read card: the peer is gone");
    got += static_cast<size_t>(n);
  }
}

struct Side {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_ep* ep = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_mr* mr = nullptr;
  void* desc = nullptr;
  std::vector<char> buffer;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  size_t early = 0;  // completions read while posting (PostOne)
};

void Open(Side* side, const char* provider, size_t bytes) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup(provider);
  Check(fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &side->info),
        "fi_getinfo");
  fi_freeinfo(hints);
  Check(fi_fabric(side->info->fabric_attr, &side->fabric, nullptr),
        "fi_fabric");
  Check(fi_domain(side->fabric, side->info, &side->domain, nullptr),
        "fi_domain");
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.size = 1024;
  Check(fi_cq_open(side->domain, &cq_attr, &side->cq, nullptr), "fi_cq_open");
  fi_av_attr av_attr = {};
  av_attr.type = FI_AV_TABLE;
  Check(fi_av_open(side->domain, &av_attr, &side->av, nullptr), "fi_av_open");
  Check(fi_endpoint(side->domain, side->info, &side->ep, nullptr),
        "fi_endpoint");
  Check(fi_ep_bind(side->ep, &side->cq->fid, FI_TRANSMIT | FI_RECV),
        "fi_ep_bind cq");
  Check(fi_ep_bind(side->ep, &side->av->fid, 0), "fi_ep_bind av");
  Check(fi_enable(side->ep), "fi_enable");
  side->buffer.assign(bytes, 'x');
  Check(fi_mr_reg(side->domain, side->buffer.data(), bytes,
                  FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
                      FI_REMOTE_WRITE,
                  0, 0, 0, &side->mr, nullptr),
        "fi_mr_reg");
  side->desc = fi_mr_desc(side->mr);
}

// Swaps cards with the peer over `fd` and puts its address in the AV.
Card Introduce(Side* side, int fd) {
  Card own = {};
  own.name_len = sizeof(own.name);
  Check(fi_getname(&side->ep->fid, own.name, &own.name_len), "fi_getname");
  own.addr = (side->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
                 ? reinterpret_cast<uint64_t>(side->buffer.data())
                 : 0;
  own.key = fi_mr_key(side->mr);
  SendAll(fd, &own, sizeof(own));
  Card peer;
  ReceiveAll(fd, &peer, sizeof(peer));
  if (fi_av_insert(side->av, peer.name, 1, &side->peer, 0, nullptr) != 1) {
    Die("fi_av_insert");
  }
  return peer;
}

// Reads up to `max` completions (progress included): how many came, 0 for
// none yet. Exits on an error completion.
size_t ReadSome(Side* side, size_t max) {
  fi_cq_entry entries[64];
  ssize_t n = fi_cq_read(side->cq, entries, max < 64 ? max : size_t{64});
  if (n > 0) return static_cast<size_t>(n);
  if (n != -FI_EAGAIN) {
    fi_cq_err_entry error = {};
    fi_cq_readerr(side->cq, &error, 0);
    Die(std::string("completion error: ") + fi_strerror(error.err));
  }
  return 0;
}

// Waits for `count` completions, counting those PostOne read first.
void Reap(Side* side, size_t count) {
  size_t early = side->early < count ? side->early : count;
  side->early -= early;
  count -= early;
  while (count > 0) count -= ReadSome(side, count);
}

// Posts one operation, progressing while the provider says EAGAIN (the
// completions that come meanwhile are kept for Reap).
template <typename Post>
void PostOne(Side* side, Post post) {
  for (;;) {
    ssize_t rc = post();
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) Die(std::string("post: ") + fi_strerror(-rc));
    side->early += ReadSome(side, 1);
  }
}

void PostReceives(Side* side, size_t size, size_t count, fi_context* ctx) {
  for (size_t i = 0; i < count; ++i) {
    PostOne(side, [&] {
      return fi_recv(side->ep, side->buffer.data(), size, side->desc,
                     side->peer, &ctx[i]);
    });
  }
}

// One window of the initiator's operations, completed. For send, each
// window waits for the target's go-ahead: its receives are posted.
void InitiatorWindow(Side* side, Mode mode, const Card& target, size_t size,
                     size_t window, fi_context* ctx) {
  if (mode == Mode::kSend) {
    PostReceives(side, 1, 1, ctx);
    Reap(side, 1);
  }
  for (size_t i = 0; i < window; ++i) {
    PostOne(side, [&]() -> ssize_t {
      char* buf = side->buffer.data();
      switch (mode) {
        case Mode::kRead:
          return fi_read(side->ep, buf, size, side->desc, side->peer,
                         target.addr, target.key, &ctx[i]);
        case Mode::kWrite:
          return fi_write(side->ep, buf, size, side->desc, side->peer,
                          target.addr, target.key, &ctx[i]);
        case Mode::kSend:
          return fi_send(side->ep, buf, size, side->desc, side->peer, &ctx[i]);
      }
      return -FI_EINVAL;
    });
  }
  Reap(side, window);
}

// The target's receives of `windows` windows of messages, each announced
// by a go-ahead.
void TargetReceives(Side* side, size_t size, size_t window, uint64_t windows,
                    fi_context* ctx) {
  for (uint64_t w = 0; w < windows; ++w) {
    PostReceives(side, size, window, ctx);
    PostOne(side, [&] {
      return fi_send(side->ep, side->buffer.data(), 1, side->desc, side->peer,
                     &ctx[window]);
    });
    Reap(side, window + 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || argc > 7) {
    std::fprintf(stderr,
                 "usage: %s read|write|send PROVIDER SIZE WINDOW ITERATIONS "
                 "[TARGET_CPU,INITIATOR_CPU]\n",
                 argv[0]);
    return 2;
  }
  Mode mode;
  if (std::strcmp(argv[1], "read") == 0) {
    mode = Mode::kRead;
  } else if (std::strcmp(argv[1], "write") == 0) {
    mode = Mode::kWrite;
  } else if (std::strcmp(argv[1], "send") == 0) {
    mode = Mode::kSend;
  } else {
    Die(std::string("unknown mode ") + argv[1]);
  }
  const char* provider = argv[2];
  size_t size = std::strtoull(argv[3], nullptr, 10);
  size_t window = std::strtoull(argv[4], nullptr, 10);
  uint64_t iterations = std::strtoull(argv[5], nullptr, 10);
  if (size == 0 || window == 0 || window > 256 || iterations == 0) {
    Die("SIZE, WINDOW (at most 256) and ITERATIONS must be positive");
  }
  int cpus[2] = {-1, -1};
  if (argc == 7 && std::sscanf(argv[6], "%d,%d", &cpus[0], &cpus[1]) != 2) {
    Die("CPUs are TARGET,INITIATOR");
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) Die("socketpair");
  // Fork before the library starts: it is not fork-safe once in use.
  pid_t child = fork();
  if (child < 0) Die("fork");
  bool initiator = child == 0;
  if (initiator) prctl(PR_SET_PDEATHSIG, SIGKILL);
  Pin(cpus[initiator ? 1 : 0]);
  int fd = fds[initiator ? 1 : 0];
  Side side;
  Open(&side, provider, size);
  Card peer = Introduce(&side, fd);
  std::vector<fi_context> ctx(window + 1);
  uint64_t warmup = iterations / 10 + 1;
  if (!initiator) {
    if (mode == Mode::kSend) {
      TargetReceives(&side, size, window, warmup + iterations, ctx.data());
    }
    // RMA needs the target's progress: until the initiator says it is
    // done, or is gone.
    char done = 0;
    for (;;) {
      ssize_t n = recv(fd, &done, 1, MSG_DONTWAIT);
      if (n >= 0 || (errno != EAGAIN && errno != EINTR)) break;
      ReadSome(&side, 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  for (uint64_t i = 0; i < warmup; ++i) {
    InitiatorWindow(&side, mode, peer, size, window, ctx.data());
  }
  auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < iterations; ++i) {
    InitiatorWindow(&side, mode, peer, size, window, ctx.data());
  }
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  std::printf("%.3f\n", static_cast<double>(size) * window * iterations /
                            seconds.count() / 1e9);
  char done = 1;
  SendAll(fd, &done, 1);
  return 0;
}

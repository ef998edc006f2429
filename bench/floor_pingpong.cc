// The floors of bench:compare and bench:mpi: what a ping-pong between two
// processes on this host costs with no library at all, so that a library's
// latency can be read as a multiple of what the machine itself takes.
//
//   floor_pingpong shm|tcp SIZE ITERATIONS [SERVER_CPU,CLIENT_CPU]
//
// shm: the two processes hand SIZE bytes back and forth through shared
//   memory, one buffer each way, a sequence number and the bytes right
//   after it (a small message shares the number's cache line); each side
//   spins on the number, then copies the bytes out, copies its answer in
//   and stores the number (release).
// tcp: a TCP connection on 127.0.0.1 (TCP_NODELAY), each side busy-polling
//   recv(MSG_DONTWAIT) until SIZE bytes are in, then sending its answer.
// Prints the client's "USEC_PER_XFER MB_PER_SEC" as fi_pingpong counts
// them (a transfer is one direction: half a round trip), after ITERATIONS
// / 10 + 1 untimed round trips. Exits 1 with a message on any failure; the
// client dies with the server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bench/pin_cpu.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

void Pin(int cpu) {
  if (!PinToCpu(cpu)) Die("sched_setaffinity");
}

// One direction of the shared-memory handoff: the number of the last
// message, then its bytes (BytesOf), in the same cache line when small.
struct Mailbox {
  std::atomic<uint64_t> seq;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

char* BytesOf(Mailbox* box) {
  return reinterpret_cast<char*>(box) + sizeof(Mailbox);
}

// Cache lines of a mailbox for SIZE bytes.
size_t MailboxSize(size_t size) {
  return (sizeof(Mailbox) + size + 63) / 64 * 64;
}

// One side's round trips `first` to `last` (their sequence numbers)
// through the mailboxes: the client sends first.
void ShmSide(bool client, Mailbox* out, Mailbox* in, size_t size,
             uint64_t first, uint64_t last, std::vector<char>* buf) {
  for (uint64_t seq = first; seq <= last; ++seq) {
    if (client) {
      std::memcpy(BytesOf(out), buf->data(), size);
      out->seq.store(seq, std::memory_order_release);
    }
    while (in->seq.load(std::memory_order_acquire) != seq) {
      __builtin_ia32_pause();
    }
    std::memcpy(buf->data(), BytesOf(in), size);
    if (!client) {
      std::memcpy(BytesOf(out), buf->data(), size);
      out->seq.store(seq, std::memory_order_release);
    }
  }
}

void SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Die("send");
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void ReceiveAllPolling(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = recv(fd, data, size, MSG_DONTWAIT);
    if (n == 0) Die("recv: the peer closed");
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      Die("recv");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void TcpSide(bool client, int fd, size_t size, uint64_t rounds,
             std::vector<char>* buf) {
  for (uint64_t i = 0; i < rounds; ++i) {
    if (client) SendAll(fd, buf->data(), size);
    ReceiveAllPolling(fd, buf->data(), size);
    if (!client) SendAll(fd, buf->data(), size);
  }
}

void NoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    Die("setsockopt(TCP_NODELAY)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5 ||
      (std::strcmp(argv[1], "shm") != 0 && std::strcmp(argv[1], "tcp") != 0)) {
    std::fprintf(stderr,
                 "usage: %s shm|tcp SIZE ITERATIONS [SERVER_CPU,CLIENT_CPU]\n",
                 argv[0]);
    return 2;
  }
  const bool shm = std::strcmp(argv[1], "shm") == 0;
  const size_t size = std::strtoull(argv[2], nullptr, 10);
  const uint64_t iterations = std::strtoull(argv[3], nullptr, 10);
  int server_cpu = -1, client_cpu = -1;
  if (argc == 5 && std::sscanf(argv[4], "%d,%d", &server_cpu,
                               &client_cpu) != 2) {
    std::fprintf(stderr, "CPUs: SERVER,CLIENT\n");
    return 2;
  }
  if (size == 0 || iterations == 0) {
    std::fprintf(stderr, "SIZE and ITERATIONS must be positive\n");
    return 2;
  }
  const uint64_t warmup = iterations / 10 + 1;

  Mailbox* to_server = nullptr;
  Mailbox* to_client = nullptr;
  int listener = -1;
  sockaddr_in address = {};
  if (shm) {
    const size_t box = MailboxSize(size);
    void* shared = mmap(nullptr, 2 * box, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) Die("mmap");
    to_server = new (shared) Mailbox;
    to_client = new (static_cast<char*>(shared) + box) Mailbox;
    to_server->seq.store(0);
    to_client->seq.store(0);
  } else {
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) Die("socket");
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(address);
    if (bind(listener, reinterpret_cast<sockaddr*>(&address), len) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&address), &len) !=
            0) {
      Die("bind/listen");
    }
  }

  std::vector<char> buf(size, 'f');
  pid_t child = fork();
  if (child < 0) Die("fork");
  const bool client = child == 0;
  // A client whose server is gone would spin forever.
  if (client && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)) {
    Die("prctl(PR_SET_PDEATHSIG)");
  }
  Pin(client ? client_cpu : server_cpu);
  int fd = -1;
  if (!shm) {
    if (client) {
      fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address),
                            sizeof(address)) != 0) {
        Die("connect");
      }
    } else {
      fd = accept(listener, nullptr, nullptr);
      if (fd < 0) Die("accept");
    }
    NoDelay(fd);
  }
  Mailbox* out = client ? to_server : to_client;
  Mailbox* in = client ? to_client : to_server;
  // Round trips `first` to `last`; the timed ones follow the warmup's.
  auto run = [&](uint64_t first, uint64_t last) {
    if (shm) {
      ShmSide(client, out, in, size, first, last, &buf);
    } else {
      TcpSide(client, fd, size, last - first + 1, &buf);
    }
  };
  run(1, warmup);
  auto start = std::chrono::steady_clock::now();
  run(warmup + 1, warmup + iterations);
  std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  if (client) {
    const double usec = elapsed.count() / (2.0 * iterations);
    std::printf("%.3f %.2f\n", usec, size / usec);
    return 0;
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "the client failed\n");
    return 1;
  }
  return 0;
}

// The tcp provider and the process's fd limit (tcp_fd_limit.h): the first
// endpoint raises the soft RLIMIT_NOFILE; past the limit a transmit that
// must connect fails with FI_EMFILE, and a listener refuses the waiting
// connection instead of staying readable; once fds are free again both
// work. One test: the raise happens once per process.
#include <arpa/inet.h>
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "fabric/providers/tcp/rdm_scale.h"
#include "gtest/gtest.h"

namespace fabric {
namespace tcp {
namespace {

constexpr auto kWait = std::chrono::seconds(5);

void SetSoftLimit(rlim_t soft) {
  rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  limit.rlim_cur = soft;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
}

// The lowest fd number free now: with the soft limit there, every new fd
// fails with EMFILE.
int LowestFreeFd() {
  int fd = dup(0);
  close(fd);
  return fd;
}

// Progresses `domain` until the CQ has an entry; the entry's return code
// (1, or -FI_EAVAIL with the error in *error).
ssize_t WaitEntry(ScaleDomain& domain, fi_cq_msg_entry* entry,
                  fi_cq_err_entry* error) {
  auto deadline = std::chrono::steady_clock::now() + kWait;
  ssize_t rc = -FI_EAGAIN;
  while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
    rc = fi_cq_read(domain.cq(), entry, 1);
  }
  if (rc == -FI_EAVAIL) fi_cq_readerr(domain.cq(), error, 0);
  return rc;
}

// fi_send, retried while it says -FI_EAGAIN (a connect under way), with
// progress in between.
ssize_t Send(ScaleDomain& domain, fid_ep* ep, const char* byte,
             fi_addr_t dest, void* context) {
  auto deadline = std::chrono::steady_clock::now() + kWait;
  ssize_t rc = fi_send(ep, byte, 1, nullptr, dest, context);
  while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
    fi_cq_read(domain.cq(), nullptr, 0);
    rc = fi_send(ep, byte, 1, nullptr, dest, context);
  }
  return rc;
}

TEST(TcpFdLimitTest, RaisesTheSoftLimitThenFailsCleanlyPastIt) {
  // UBSan's dynamic type check probes memory through a pipe, which fails
  // with no fd left: it reports a false "invalid vptr" at the first
  // virtual call the test makes past the limit.
  if (dlsym(RTLD_DEFAULT, "__ubsan_handle_dynamic_type_cache_miss") !=
      nullptr) {
    GTEST_SKIP() << "UBSan's vptr check needs free fds";
  }
  rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max < 512) GTEST_SKIP() << "hard RLIMIT_NOFILE < 512";
  const rlim_t hard = limit.rlim_max;
  SetSoftLimit(256);

  ScaleDomain domain;
  ASSERT_EQ(domain.Open(FI_WAIT_FD), 0);
  fid_ep* a;
  fid_ep* b;
  sockaddr_in a_name, b_name;
  ASSERT_EQ(domain.OpenEndpoint(&a, &a_name), 0);
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  EXPECT_EQ(limit.rlim_cur, hard) << "the first endpoint raises it";
  ASSERT_EQ(domain.OpenEndpoint(&b, &b_name), 0);
  fi_addr_t a_addr, b_addr;
  ASSERT_EQ(fi_av_insert(domain.av(), &a_name, 1, &a_addr, 0, nullptr), 1);
  ASSERT_EQ(fi_av_insert(domain.av(), &b_name, 1, &b_addr, 0, nullptr), 1);
  int wait_fd = -1;
  ASSERT_EQ(fi_control(&domain.cq()->fid, FI_GETWAIT, &wait_fd), 0);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);

  SetSoftLimit(LowestFreeFd());
  // Connect side: the transmit fails (in the call, or as an error entry
  // when connecting does not happen inside the call).
  char byte = 'x';
  ssize_t sent = Send(domain, a, &byte, b_addr, nullptr);
  if (sent == 0) {
    fi_cq_msg_entry entry;
    fi_cq_err_entry error = {};
    ASSERT_EQ(WaitEntry(domain, &entry, &error), -FI_EAVAIL);
    EXPECT_EQ(error.err, FI_EMFILE) << fi_strerror(error.err);
  } else {
    EXPECT_EQ(sent, -FI_EMFILE) << fi_strerror(static_cast<int>(-sent));
  }
  // Accept side: a connection waiting on A's listener is refused (the
  // client sees it end) and the listener no longer reads as ready.
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&a_name),
                    sizeof(a_name)),
            0);
  auto deadline = std::chrono::steady_clock::now() + kWait;
  ssize_t got = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    EXPECT_EQ(fi_cq_read(domain.cq(), nullptr, 0), -FI_EAGAIN);
    got = recv(client, &byte, 1, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN)) break;
  }
  EXPECT_TRUE(got == 0 || (got < 0 && errno == ECONNRESET))
      << "recv: " << got << " " << strerror(errno);
  pollfd ready = {wait_fd, POLLIN, 0};
  EXPECT_EQ(poll(&ready, 1, 0), 0) << "something still reads as ready";
  close(client);

  // With fds again: B connects to A, whose listener accepts.
  SetSoftLimit(hard);
  char in = 0;
  int recv_context, send_context;
  ASSERT_EQ(fi_recv(a, &in, 1, nullptr, FI_ADDR_UNSPEC, &recv_context), 0);
  ssize_t rc = Send(domain, b, "y", a_addr, &send_context);
  ASSERT_EQ(rc, 0) << fi_strerror(static_cast<int>(-rc));
  for (int i = 0; i < 2; ++i) {
    fi_cq_msg_entry entry;
    fi_cq_err_entry error = {};
    ASSERT_EQ(WaitEntry(domain, &entry, &error), 1)
        << fi_strerror(error.err);
    EXPECT_TRUE(entry.op_context == &recv_context ||
                entry.op_context == &send_context);
  }
  EXPECT_EQ(in, 'y');

  EXPECT_EQ(fi_close(&a->fid), 0);
  EXPECT_EQ(fi_close(&b->fid), 0);
  EXPECT_EQ(domain.Close(), 0);
}

}  // namespace
}  // namespace tcp
}  // namespace fabric

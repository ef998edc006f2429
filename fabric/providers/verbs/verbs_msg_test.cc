// The verbs MSG endpoint between two processes, through the public C API:
// a server process listens on the first active port's IP address, accepts
// (its region's address and key travel in the accept's connection data),
// and answers; the client sends, reads, writes with remote CQ data, and
// reads with a key it was never given. A rejection carries the server's
// data back to the client. Bad calls fail with clear errors, on endpoints
// and on shared receive contexts (SRQs). The deepest queues fi_getinfo
// offers can be made. RDM endpoints: verbs_rdm_test.cc.
//
// Runs where an RDMA device with an ACTIVE port and an IP address exists
// (InfiniBand with IPoIB, RoCE, or soft-RoCE: `rdma link add rxe0 type rxe
// netdev eth0`); elsewhere, as on machines without RDMA, each test is
// skipped and says why.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "fabric/providers/util/cq.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

constexpr size_t kRegion = 1 << 16;
constexpr int kTimeoutMs = 10000;
constexpr uint64_t kImmediate = 0x5a5a1234;

// What the server's accept tells the client.
struct Advert {
  uint64_t addr;
  uint64_t key;
};

uint64_t NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000ull + now.tv_nsec / 1000000;
}

// The first verbs MSG info addressed by IPv4 (with send and receive
// queues of `queue_size` entries, 0: the default), or null (the reason in
// *why).
fi_info* VerbsInfo(const char* node, const char* service, uint64_t flags,
                   std::string* why, size_t queue_size = 0) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("verbs");
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_RX_CQ_DATA;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->tx_attr->size = queue_size;
  hints->rx_attr->size = queue_size;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), node, service, flags, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) {
    *why = std::string("verbs offers no MSG endpoint here (fi_getinfo: ") +
           fi_strerror(-rc) +
           "): no RDMA device with an ACTIVE port and an IPv4 address "
           "(soft-RoCE: rdma link add rxe0 type rxe netdev eth0)";
    return nullptr;
  }
  return info;
}

// The objects of one side.
struct Side : fixtures::Objects {
  std::vector<char> region = std::vector<char>(kRegion);

  ~Side() { fixtures::CloseObjects(this); }

  // Fabric, domain, EQ, CQ and the region on `info` (taken).
  int Open(fi_info* taken) {
    info = taken;
    int rc = fi_fabric(info->fabric_attr, &fabric, nullptr);
    if (rc == 0) rc = fi_domain(fabric, info, &domain, nullptr);
    fi_eq_attr eq_attr = {};
    if (rc == 0) rc = fi_eq_open(fabric, &eq_attr, &eq, nullptr);
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    cq_attr.size = 64;
    if (rc == 0) rc = fi_cq_open(domain, &cq_attr, &cq, nullptr);
    uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
                      FI_REMOTE_READ | FI_REMOTE_WRITE;
    if (rc == 0) {
      rc = fi_mr_reg(domain, region.data(), region.size(), access, 0, 0, 0,
                     &mr, nullptr);
    }
    return rc;
  }

  // An endpoint on `with` bound to the EQ and CQ, enabled.
  int OpenEndpoint(fi_info* with) {
    int rc = fi_endpoint(domain, with, &ep, nullptr);
    if (rc == 0) rc = fi_ep_bind(ep, &eq->fid, 0);
    if (rc == 0) rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_enable(ep);
    return rc;
  }

  // The next EQ event (its connection data in *data), or the error entry's
  // -err (its data in *data).
  int WaitEvent(uint32_t* event, std::vector<char>* data,
                fi_info** info_out = nullptr) {
    std::vector<char> bytes;
    fi_eq_err_entry error = {};
    ssize_t n = fixtures::WaitForEvent(eq, event, &bytes, &error,
                                       std::chrono::milliseconds(kTimeoutMs));
    if (n == -FI_EAVAIL) {
      const char* err_data = static_cast<const char*>(error.err_data);
      data->assign(err_data, err_data + error.err_data_size);
      return -error.err;
    }
    if (n < static_cast<ssize_t>(sizeof(fi_eq_cm_entry))) {
      return n < 0 ? static_cast<int>(n) : -FI_EIO;
    }
    fi_eq_cm_entry entry = fixtures::CmEntryOf(bytes);
    data->assign(bytes.begin() + sizeof(entry), bytes.end());
    if (info_out != nullptr) {
      *info_out = entry.info;
    } else {
      fi_freeinfo(entry.info);
    }
    return 0;
  }

  // The next completion, or the error's -err.
  int WaitCompletion(fi_cq_data_entry* entry) {
    for (uint64_t start = NowMs(); NowMs() - start < kTimeoutMs;) {
      ssize_t n = fi_cq_read(cq, entry, 1);
      if (n == 1) return 0;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        fi_cq_readerr(cq, &error, 0);
        return -error.err;
      }
      if (n != -FI_EAGAIN) return static_cast<int>(n);
    }
    return -FI_ETIMEDOUT;
  }

  void* desc() const { return fi_mr_desc(mr); }
};

// The server process: listens on `info`'s address, writes its port to
// `port_fd`, then serves one connection (`reject`: rejects it with
// "busy"). Returns the process's exit status: 0 when every check held.
int Serve(fi_info* info, int port_fd, bool reject) {
  Side server;
  if (server.Open(info) != 0) return 10;
  if (fi_passive_ep(server.fabric, server.info, &server.pep, nullptr) != 0 ||
      fi_pep_bind(server.pep, &server.eq->fid, 0) != 0 ||
      fi_listen(server.pep) != 0) {
    return 11;
  }
  sockaddr_in name = {};
  size_t len = sizeof(name);
  if (fi_getname(&server.pep->fid, &name, &len) != 0) return 12;
  if (write(port_fd, &name, sizeof(name)) != sizeof(name)) return 13;
  uint32_t event = 0;
  std::vector<char> data;
  fi_info* request = nullptr;
  if (server.WaitEvent(&event, &data, &request) != 0 || event != FI_CONNREQ) {
    return 14;
  }
  if (std::string(data.begin(), data.end()) != "hello") return 15;
  if (reject) {
    int rc = fi_reject(server.pep, request->handle, "busy", 4);
    fi_freeinfo(request);
    return rc == 0 ? 0 : 16;
  }
  int rc = server.OpenEndpoint(request);
  fi_freeinfo(request);
  if (rc != 0) return 17;
  // Two receives: the client's message, then its write with remote CQ
  // data (which consumes one).
  char* base = server.region.data();
  if (fi_recv(server.ep, base, 4096, server.desc(), 0, nullptr) != 0 ||
      fi_recv(server.ep, base + 4096, 64, server.desc(), 0, nullptr) != 0) {
    return 18;
  }
  Advert advert = {reinterpret_cast<uintptr_t>(base), fi_mr_key(server.mr)};
  if (fi_accept(server.ep, &advert, sizeof(advert)) != 0) return 19;
  if (server.WaitEvent(&event, &data) != 0 || event != FI_CONNECTED) return 20;
  fi_cq_data_entry entry = {};
  if (server.WaitCompletion(&entry) != 0 || entry.len != 3000 ||
      (entry.flags & FI_RECV) == 0) {
    return 21;
  }
  for (size_t i = 0; i < 3000; ++i) {
    if (base[i] != static_cast<char>(i * 7)) return 22;
  }
  // The answer: the same bytes back.
  if (fi_send(server.ep, base, 3000, server.desc(), 0, nullptr) != 0) {
    return 23;
  }
  if (server.WaitCompletion(&entry) != 0 || (entry.flags & FI_SEND) == 0) {
    return 24;
  }
  // The client's write with immediate data lands at offset 8192.
  if (server.WaitCompletion(&entry) != 0 ||
      (entry.flags & FI_REMOTE_CQ_DATA) == 0 || entry.data != kImmediate) {
    return 25;
  }
  if (memcmp(base + 8192, "written by the client", 21) != 0) return 26;
  // The client shuts down: FI_SHUTDOWN here.
  if (server.WaitEvent(&event, &data) != 0 || event != FI_SHUTDOWN) return 27;
  return 0;
}

class VerbsMsgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    info_ = VerbsInfo(nullptr, nullptr, 0, &why_);
    if (info_ == nullptr) GTEST_SKIP() << why_;
  }
  void TearDown() override { fi_freeinfo(info_); }

  // Forks the server on a copy of the first info's address (port 0); its
  // listening address in *address.
  void StartServer(bool reject, sockaddr_in* address) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    fi_info* server_info = fi_dupinfo(info_);
    reinterpret_cast<sockaddr_in*>(server_info->src_addr)->sin_port = 0;
    server_ = fork();
    ASSERT_GE(server_, 0);
    if (server_ == 0) {
      close(fds[0]);
      _exit(Serve(server_info, fds[1], reject));
    }
    fi_freeinfo(server_info);
    close(fds[1]);
    ASSERT_EQ(read(fds[0], address, sizeof(*address)),
              static_cast<ssize_t>(sizeof(*address)));
    close(fds[0]);
  }

  // Opens `client` on the first info and connects it to `server` with
  // "hello".
  void ConnectClient(Side* client, const sockaddr_in& server) {
    ASSERT_EQ(client->Open(fi_dupinfo(info_)), 0);
    ASSERT_EQ(client->OpenEndpoint(client->info), 0);
    ASSERT_EQ(fi_connect(client->ep, &server, "hello", 5), 0);
  }

  int ServerStatus() {
    int status = 0;
    waitpid(server_, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

  fi_info* info_ = nullptr;
  std::string why_;
  pid_t server_ = -1;
};

TEST_F(VerbsMsgTest, MessagesRmaAndRemoteCqDataBetweenProcesses) {
  sockaddr_in server_address;
  ASSERT_NO_FATAL_FAILURE(StartServer(false, &server_address));
  Side client;
  ASSERT_NO_FATAL_FAILURE(ConnectClient(&client, server_address));
  uint32_t event = 0;
  std::vector<char> data;
  ASSERT_EQ(client.WaitEvent(&event, &data), 0);
  ASSERT_EQ(event, FI_CONNECTED);
  ASSERT_EQ(data.size(), sizeof(Advert));
  Advert server;
  memcpy(&server, data.data(), sizeof(server));

  char* base = client.region.data();
  ASSERT_EQ(fi_recv(client.ep, base + 4096, 4096, client.desc(), 0, nullptr),
            0);
  for (size_t i = 0; i < 3000; ++i) base[i] = static_cast<char>(i * 7);
  ASSERT_EQ(fi_send(client.ep, base, 3000, client.desc(), 0, nullptr), 0);
  fi_cq_data_entry entry = {};
  ASSERT_EQ(client.WaitCompletion(&entry), 0);  // the send
  EXPECT_NE(entry.flags & FI_SEND, 0u);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);  // the answer
  EXPECT_NE(entry.flags & FI_RECV, 0u);
  EXPECT_EQ(entry.len, 3000u);
  EXPECT_EQ(memcmp(base, base + 4096, 3000), 0);

  // RMA: read the server's first 3000 bytes back, then write with
  // immediate data at offset 8192.
  ASSERT_EQ(fi_read(client.ep, base + 16384, 3000, client.desc(), 0,
                    server.addr, server.key, nullptr),
            0);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);
  EXPECT_EQ(entry.flags, static_cast<uint64_t>(FI_RMA | FI_READ));
  EXPECT_EQ(memcmp(base, base + 16384, 3000), 0);
  memcpy(base + 20000, "written by the client", 21);
  ASSERT_EQ(fi_writedata(client.ep, base + 20000, 21, client.desc(),
                         kImmediate, 0, server.addr + 8192, server.key,
                         nullptr),
            0);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);
  EXPECT_EQ(entry.flags, static_cast<uint64_t>(FI_RMA | FI_WRITE));

  // The registration cache: a local region over memory freed and mapped
  // again at the same address gets a new registration, so the device
  // reads the new pages ('B'), never the old ones a stale registration
  // would still pin ('A'). Written past what the server checks; a whole
  // page, larger than inline data (copied by the CPU, not the device).
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* local = static_cast<char*>(mmap(nullptr, page, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(local, MAP_FAILED);
  memset(local, 'A', page);
  uint32_t first_lkey = 0;
  for (int round = 0; round < 2; ++round) {
    fid_mr* mr = nullptr;
    ASSERT_EQ(fi_mr_reg(client.domain, local, page, FI_WRITE, 0, 0, 0, &mr,
                        nullptr),
              0);
    uint32_t lkey = static_cast<const uint32_t*>(fi_mr_desc(mr))[0];
    if (round == 0) first_lkey = lkey;
    // Still mapped: the cached registration serves the second region.
    if (round == 1) EXPECT_EQ(lkey, first_lkey);
    ASSERT_EQ(fi_write(client.ep, local, page, fi_mr_desc(mr), 0,
                       server.addr + 32768, server.key, nullptr),
              0);
    ASSERT_EQ(client.WaitCompletion(&entry), 0);
    EXPECT_EQ(fi_close(&mr->fid), 0);
  }
  // New pages in place of the old (which are freed), at the same address.
  char* again = static_cast<char*>(mmap(local, page, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS |
                                            MAP_FIXED,
                                        -1, 0));
  ASSERT_EQ(again, local);
  memset(again, 'B', page);
  fid_mr* fresh = nullptr;
  ASSERT_EQ(fi_mr_reg(client.domain, again, page, FI_WRITE, 0, 0, 0, &fresh,
                      nullptr),
            0);
  ASSERT_EQ(fi_write(client.ep, again, page, fi_mr_desc(fresh), 0,
                     server.addr + 32768, server.key, nullptr),
            0);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);
  ASSERT_EQ(fi_read(client.ep, base + 24576, page, client.desc(), 0,
                    server.addr + 32768, server.key, nullptr),
            0);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);
  EXPECT_EQ(std::string(base + 24576, page), std::string(page, 'B'))
      << "the device read pages a stale registration pinned";
  EXPECT_EQ(fi_close(&fresh->fid), 0);
  ASSERT_EQ(munmap(again, page), 0);

  // inject_size is what the device takes inline (probed when fi_getinfo
  // ran): that many bytes go inline by fi_inject_write; one more is
  // refused by our own check.
  const size_t inject = client.info->tx_attr->inject_size;
  ASSERT_GT(inject, 0u);
  for (size_t i = 0; i <= inject; ++i) base[i] = static_cast<char>(i * 3 + 1);
  EXPECT_EQ(fi_inject_write(client.ep, base, inject + 1, 0,
                            server.addr + 40960, server.key),
            -FI_EINVAL);
  ASSERT_EQ(fi_inject_write(client.ep, base, inject, 0, server.addr + 40960,
                            server.key),
            0);
  ASSERT_EQ(fi_read(client.ep, base + 45056, inject, client.desc(), 0,
                    server.addr + 40960, server.key, nullptr),
            0);
  ASSERT_EQ(client.WaitCompletion(&entry), 0);  // the read only
  EXPECT_EQ(entry.flags, static_cast<uint64_t>(FI_RMA | FI_READ));
  EXPECT_EQ(memcmp(base, base + 45056, inject), 0);

  // A key the server never gave: the device refuses, an error entry.
  ASSERT_EQ(fi_read(client.ep, base, 8, client.desc(), 0, server.addr,
                    server.key ^ 0x1000, nullptr),
            0);
  EXPECT_NE(client.WaitCompletion(&entry), 0);

  EXPECT_EQ(fi_shutdown(client.ep, 0), 0);
  EXPECT_EQ(ServerStatus(), 0);
}

TEST_F(VerbsMsgTest, ARejectionCarriesTheServersData) {
  sockaddr_in server_address;
  ASSERT_NO_FATAL_FAILURE(StartServer(true, &server_address));
  Side client;
  ASSERT_NO_FATAL_FAILURE(ConnectClient(&client, server_address));
  uint32_t event = 0;
  std::vector<char> data;
  EXPECT_EQ(client.WaitEvent(&event, &data), -FI_ECONNREFUSED);
  EXPECT_EQ(std::string(data.begin(), data.end()), "busy");
  EXPECT_EQ(ServerStatus(), 0);
}

TEST_F(VerbsMsgTest, BadCallsFailCleanly) {
  Side side;
  ASSERT_EQ(side.Open(fi_dupinfo(info_)), 0);
  ASSERT_EQ(side.OpenEndpoint(side.info), 0);
  char buf[8];
  // Not connected yet.
  EXPECT_EQ(fi_send(side.ep, buf, sizeof(buf), side.desc(), 0, nullptr),
            -FI_ENOTCONN);
  // More connection data than the CM carries.
  std::vector<char> big(64, 'x');
  sockaddr_in nowhere = *static_cast<sockaddr_in*>(side.info->src_addr);
  EXPECT_EQ(fi_connect(side.ep, &nowhere, big.data(), big.size()),
            -FI_EINVAL);
  // A receive without a descriptor (FI_MR_LOCAL), and a multi-receive
  // (which verbs does not do).
  EXPECT_EQ(fi_recv(side.ep, buf, sizeof(buf), nullptr, 0, nullptr),
            -FI_EINVAL);
  // A descriptor that is no region is refused, not read (it crashed).
  void* garbage = reinterpret_cast<void*>(0xdeadbeef);
  EXPECT_EQ(fi_recv(side.ep, buf, sizeof(buf), garbage, 0, nullptr),
            -FI_EINVAL);
  iovec iov = {buf, sizeof(buf)};
  void* desc = side.desc();
  fi_msg msg = {&iov, &desc, 1, 0, nullptr, 0};
  EXPECT_EQ(fi_recvmsg(side.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
  // Atomics beyond what verbs does.
  size_t count = 0;
  EXPECT_EQ(fi_atomicvalid(side.ep, FI_DOUBLE, FI_SUM, &count),
            -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_compare_atomicvalid(side.ep, FI_UINT64, FI_SUM, &count),
            -FI_EOPNOTSUPP);
  // The CQ producer (util/cq.h) goes to a non-NULL pointer, from an
  // enabled endpoint only.
  EXPECT_EQ(fi_control(&side.ep->fid, kControlGetCqDirectProducer, nullptr),
            -FI_EINVAL);
  CqDirectProducer* producer = nullptr;
  EXPECT_EQ(fi_control(&side.ep->fid, kControlGetCqDirectProducer, &producer),
            0);
  EXPECT_NE(producer, nullptr);
  fid_ep* idle = nullptr;
  ASSERT_EQ(fi_endpoint(side.domain, side.info, &idle, nullptr), 0);
  producer = nullptr;
  EXPECT_EQ(fi_control(&idle->fid, kControlGetCqDirectProducer, &producer),
            -FI_EINVAL);
  EXPECT_EQ(producer, nullptr);
  EXPECT_EQ(fi_close(&idle->fid), 0);
}

// fi_srx_context on an MSG domain (an SRQ) and its bindings refuse what
// they cannot take, each with its error.
TEST_F(VerbsMsgTest, SharedReceiveContextsRefuseBadCalls) {
  Side side;
  ASSERT_EQ(side.Open(fi_dupinfo(info_)), 0);
  fi_rx_attr attr = {};
  fid_ep* srx = nullptr;
  attr.size = size_t{1} << 40;  // beyond any device's SRQ
  EXPECT_EQ(fi_srx_context(side.domain, &attr, &srx, nullptr), -FI_EINVAL);
  attr.size = 0;
  attr.op_flags = FI_MULTI_RECV;
  EXPECT_EQ(fi_srx_context(side.domain, &attr, &srx, nullptr), -FI_EBADFLAGS);
  attr.op_flags = 0;
  ASSERT_EQ(fi_srx_context(side.domain, &attr, &srx, nullptr), 0);
  char buf[8];
  EXPECT_EQ(fi_recvmsg(srx, nullptr, 0), -FI_EINVAL);
  iovec iov = {buf, sizeof(buf)};
  void* desc = side.desc();
  fi_msg msg = {&iov, &desc, 1, 0, nullptr, 0};
  EXPECT_EQ(fi_recvmsg(srx, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
  EXPECT_EQ(fi_send(srx, buf, sizeof(buf), desc, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_cancel(&srx->fid, buf), -FI_ENOSYS);
  // Binds: flags, and only before fi_enable.
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(side.domain, side.info, &ep, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep, &srx->fid, FI_RECV), -FI_EBADFLAGS);
  ASSERT_EQ(fi_ep_bind(ep, &side.eq->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(ep, &side.cq->fid, FI_TRANSMIT | FI_RECV), 0);
  ASSERT_EQ(fi_enable(ep), 0);
  EXPECT_EQ(fi_ep_bind(ep, &srx->fid, 0), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_close(&ep->fid), 0);
  EXPECT_EQ(fi_close(&srx->fid), 0);
}

// Regions without remote access: soft-RoCE gives each the remote key 0,
// which must not make the second registration fail (the RDM endpoint's own
// buffers are such regions: rds_example's first fi_send failed with
// -FI_ENOKEY); each gets a key of its own.
TEST_F(VerbsMsgTest, RegionsWithoutRemoteAccessAllRegister) {
  Side side;
  ASSERT_EQ(side.Open(fi_dupinfo(info_)), 0);
  std::vector<std::vector<char>> buffers(3, std::vector<char>(4096));
  std::vector<fid_mr*> mrs;
  for (std::vector<char>& buffer : buffers) {
    fid_mr* mr = nullptr;
    ASSERT_EQ(fi_mr_reg(side.domain, buffer.data(), buffer.size(),
                        FI_SEND | FI_RECV, 0, 0, 0, &mr, nullptr),
              0);
    mrs.push_back(mr);
  }
  EXPECT_NE(fi_mr_key(mrs[0]), fi_mr_key(mrs[1]));
  EXPECT_NE(fi_mr_key(mrs[1]), fi_mr_key(mrs[2]));
  for (fid_mr* mr : mrs) EXPECT_EQ(fi_close(&mr->fid), 0);
}

// RDM endpoints over RC queue pairs (rxm_ep.h): two in this process, each
// with its own fabric and domain, reach each other through their AVs.
// The deepest queues fi_getinfo offers can be made: their completions
// share one CQ, which the device may cap below twice the queue pair's
// depth (soft-RoCE: max_cqe 32767, max_qp_wr 1048576; fi_enable failed
// making that CQ before fi_getinfo took it into account).
TEST_F(VerbsMsgTest, TheDeepestQueuesOfferedCanBeMade) {
  std::string why;
  size_t deepest = 1, beyond = size_t{1} << 26;
  while (beyond - deepest > 1) {
    size_t middle = deepest + (beyond - deepest) / 2;
    fi_info* info = VerbsInfo(nullptr, nullptr, 0, &why, middle);
    fi_freeinfo(info);
    (info != nullptr ? deepest : beyond) = middle;
  }
  Side side;
  ASSERT_EQ(side.Open(VerbsInfo(nullptr, nullptr, 0, &why, deepest)), 0)
      << why;
  EXPECT_EQ(side.info->tx_attr->size, deepest);
  EXPECT_EQ(side.OpenEndpoint(side.info), 0)
      << "queues of " << deepest << " entries";
}

}  // namespace
}  // namespace fabric

// The verbs datagram endpoint (UD queue pairs) through the public C API:
// two endpoints exchange datagrams of every size up to the port's MTU
// (scattered, gathered, injected, with remote CQ data), each receive
// reporting its sender (FI_SOURCE); an echo process answers every datagram
// of another; a datagram sent where no receive is posted is dropped and
// the endpoints go on; bad calls and malformed addresses fail with clear
// errors.
//
// Runs where an RDMA device with an ACTIVE port exists (soft-RoCE: `rdma
// link add rxe0 type rxe netdev eth0`; //fabric/providers/verbs:
// verbs_in_guest_test runs it there); elsewhere each test is skipped and
// says why.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

constexpr int kTimeoutMs = 10000;
constexpr size_t kNameSize = 32;  // FI_ADDR_IB_UD
constexpr uint64_t kData = 0x1234abcd;

uint64_t NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000ull + now.tv_nsec / 1000000;
}

// The verbs datagram info (FI_MR_LOCAL when `local`), or null with the
// reason in *why.
fi_info* DgramInfo(bool local, std::string* why) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("verbs");
  hints->ep_attr->type = FI_EP_DGRAM;
  hints->caps = FI_MSG | FI_SOURCE;
  hints->addr_format = FI_ADDR_IB_UD;
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                FI_MR_PROV_KEY | (local ? FI_MR_LOCAL : 0);
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) {
    *why = std::string("verbs offers no datagram endpoint here (fi_getinfo: ") +
           fi_strerror(-rc) + "): no RDMA device with an ACTIVE port";
    return nullptr;
  }
  return info;
}

// A fabric, domain and AV, and endpoints on them.
struct Node : fixtures::Objects {
  ~Node() { fixtures::CloseObjects(this); }
  int Open(fi_info* taken) {
    info = taken;
    int rc = fi_fabric(info->fabric_attr, &fabric, nullptr);
    if (rc == 0) rc = fi_domain(fabric, info, &domain, nullptr);
    fi_av_attr av_attr = {};
    if (rc == 0) rc = fi_av_open(domain, &av_attr, &av, nullptr);
    return rc;
  }
};

struct Endpoint {
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  std::vector<char> name = std::vector<char>(kNameSize);

  ~Endpoint() {
    if (ep != nullptr) fi_close(&ep->fid);
    if (cq != nullptr) fi_close(&cq->fid);
  }
  int Open(Node& node) {
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    int rc = fi_cq_open(node.domain, &cq_attr, &cq, nullptr);
    if (rc == 0) rc = fi_endpoint(node.domain, node.info, &ep, nullptr);
    if (rc == 0) rc = fi_ep_bind(ep, &node.av->fid, 0);
    if (rc == 0) rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_enable(ep);
    size_t len = name.size();
    if (rc == 0) rc = fi_getname(&ep->fid, name.data(), &len);
    return rc;
  }
  // The next completion of a send (FI_SEND) or a receive (FI_RECV), or
  // the first error's -err, or -FI_ETIMEDOUT. Sends and receives complete
  // on one CQ, not always in the order they happened on the wire: one of
  // the other kind read meanwhile is kept for its own wait.
  int WaitFor(uint64_t kind, fi_cq_data_entry* entry, fi_addr_t* source) {
    for (size_t i = 0; i < kept.size(); ++i) {
      if ((kept[i].entry.flags & kind) == 0) continue;
      *entry = kept[i].entry;
      *source = kept[i].source;
      kept.erase(kept.begin() + i);
      return 0;
    }
    const uint64_t deadline = NowMs() + kTimeoutMs;
    while (NowMs() < deadline) {
      Kept got;
      ssize_t rc = fi_cq_readfrom(cq, &got.entry, 1, &got.source);
      if (rc == 1 && (got.entry.flags & kind) != 0) {
        *entry = got.entry;
        *source = got.source;
        return 0;
      }
      if (rc == 1) {
        kept.push_back(got);
        continue;
      }
      if (rc == -FI_EAVAIL) {
        fi_cq_err_entry error = {};
        fi_cq_readerr(cq, &error, 0);
        return -error.err;
      }
      if (rc != -FI_EAGAIN) return static_cast<int>(rc);
    }
    return -FI_ETIMEDOUT;
  }
  int WaitFor(uint64_t kind) {
    fi_cq_data_entry entry;
    fi_addr_t source;
    return WaitFor(kind, &entry, &source);
  }

  struct Kept {
    fi_cq_data_entry entry;
    fi_addr_t source;
  };
  std::vector<Kept> kept;
};

fi_addr_t Insert(Node& node, const Endpoint& peer) {
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert(node.av, peer.name.data(), 1, &addr, 0, nullptr), 1);
  return addr;
}

class VerbsDgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    fi_info* info = DgramInfo(false, &why);
    if (info == nullptr) GTEST_SKIP() << why;
    ASSERT_EQ(node_.Open(info), 0);
    ASSERT_EQ(a_.Open(node_), 0);
    ASSERT_EQ(b_.Open(node_), 0);
    a_to_b_ = Insert(node_, b_);
    b_to_a_ = Insert(node_, a_);
    mtu_ = node_.info->ep_attr->max_msg_size;
  }

  Node node_;
  Endpoint a_;
  Endpoint b_;
  fi_addr_t a_to_b_ = FI_ADDR_NOTAVAIL;
  fi_addr_t b_to_a_ = FI_ADDR_NOTAVAIL;
  size_t mtu_ = 0;
};

TEST_F(VerbsDgramTest, EverySizeArrivesWithItsSenderAndData) {
  EXPECT_GE(mtu_, 256u);
  std::vector<char> out(mtu_), in(mtu_);
  for (size_t size : {size_t{0}, size_t{1}, size_t{63}, size_t{64},
                      size_t{65}, mtu_ / 2, mtu_ - 1, mtu_}) {
    SCOPED_TRACE(size);
    for (size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i * 7 + size);
    memset(in.data(), 0, in.size());
    ASSERT_EQ(fi_recv(b_.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      &in),
              0);
    ASSERT_EQ(fi_senddata(a_.ep, out.data(), size, nullptr, kData + size,
                          a_to_b_, &out),
              0);
    fi_cq_data_entry sent;
    fi_addr_t unused;
    ASSERT_EQ(a_.WaitFor(FI_SEND, &sent, &unused), 0);
    EXPECT_EQ(sent.op_context, &out);
    EXPECT_EQ(sent.flags, FI_SEND | FI_MSG);
    fi_cq_data_entry got;
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(b_.WaitFor(FI_RECV, &got, &source), 0);
    EXPECT_EQ(got.op_context, &in);
    EXPECT_EQ(got.len, size);
    EXPECT_EQ(got.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
    EXPECT_EQ(got.data, kData + size);
    EXPECT_EQ(source, b_to_a_);
    EXPECT_EQ(memcmp(in.data(), out.data(), size), 0);
  }
}

TEST_F(VerbsDgramTest, PiecesAreGatheredAndScattered) {
  char head[5] = "abcd", tail[300];
  memset(tail, 'z', sizeof(tail));
  iovec out[2] = {{head, 4}, {tail, sizeof(tail)}};
  char first[100], second[400];
  iovec in[2] = {{first, sizeof(first)}, {second, sizeof(second)}};
  ASSERT_EQ(fi_recvv(b_.ep, in, nullptr, 2, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_sendv(a_.ep, out, nullptr, 2, a_to_b_, nullptr), 0);
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  fi_cq_data_entry got;
  fi_addr_t source;
  ASSERT_EQ(b_.WaitFor(FI_RECV, &got, &source), 0);
  ASSERT_EQ(got.len, 304u);
  EXPECT_EQ(memcmp(first, "abcd", 4), 0);
  EXPECT_EQ(first[4], 'z');
  EXPECT_EQ(second[203], 'z');
  // An inject: the buffer is free at once, and no entry is written.
  char small[16] = "injected";
  char landing[64] = {};
  ASSERT_EQ(fi_recv(a_.ep, landing, sizeof(landing), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_inject(b_.ep, small, sizeof(small), b_to_a_), 0);
  memset(small, 0, sizeof(small));
  ASSERT_EQ(a_.WaitFor(FI_RECV, &got, &source), 0);
  EXPECT_EQ(got.flags, FI_RECV | FI_MSG);
  EXPECT_STREQ(landing, "injected");
  EXPECT_EQ(fi_cq_read(b_.cq, &got, 1), -FI_EAGAIN);
}

TEST_F(VerbsDgramTest, ADatagramWithNoReceivePostedIsDroppedNotHung) {
  char out[32] = "nobody listens";
  ASSERT_EQ(fi_send(a_.ep, out, sizeof(out), nullptr, a_to_b_, nullptr), 0);
  // Sent: the device does not know of the loss.
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  usleep(100 * 1000);
  fi_cq_data_entry got;
  EXPECT_EQ(fi_cq_read(b_.cq, &got, 1), -FI_EAGAIN);
  // The endpoints go on.
  char in[32] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  strcpy(out, "second");
  ASSERT_EQ(fi_send(a_.ep, out, sizeof(out), nullptr, a_to_b_, nullptr), 0);
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  ASSERT_EQ(b_.WaitFor(FI_RECV), 0);
  EXPECT_STREQ(in, "second");
}

TEST_F(VerbsDgramTest, ADatagramLongerThanItsReceiveFailsThatReceiveOnly) {
  char out[200];
  memset(out, 'x', sizeof(out));
  char small[16] = {};
  ASSERT_EQ(fi_recv(b_.ep, small, sizeof(small), nullptr, FI_ADDR_UNSPEC,
                    small),
            0);
  ASSERT_EQ(fi_send(a_.ep, out, sizeof(out), nullptr, a_to_b_, nullptr), 0);
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  fi_cq_data_entry got;
  fi_addr_t source;
  EXPECT_EQ(b_.WaitFor(FI_RECV, &got, &source), -FI_ETRUNC);
  // The endpoint goes on: the next datagram fits and arrives.
  char in[300] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, out, sizeof(out), nullptr, a_to_b_, nullptr), 0);
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  ASSERT_EQ(b_.WaitFor(FI_RECV, &got, &source), 0);
  EXPECT_EQ(got.len, sizeof(out));
  EXPECT_EQ(in[199], 'x');
}

TEST_F(VerbsDgramTest, BadCallsFailClearly) {
  std::vector<char> big(mtu_ + 1);
  EXPECT_EQ(fi_send(a_.ep, big.data(), big.size(), nullptr, a_to_b_, nullptr),
            -FI_EMSGSIZE);
  char buf[16] = {};
  EXPECT_EQ(fi_send(a_.ep, buf, sizeof(buf), nullptr, 999, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_inject(a_.ep, big.data(), 65, a_to_b_), -FI_EINVAL);
  iovec iov = {buf, sizeof(buf)};
  fi_msg msg = {};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = a_to_b_;
  EXPECT_EQ(fi_sendmsg(a_.ep, &msg, FI_DELIVERY_COMPLETE), -FI_EBADFLAGS);
  EXPECT_EQ(fi_recvmsg(a_.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
  EXPECT_EQ(fi_sendmsg(a_.ep, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_recvv(a_.ep, nullptr, nullptr, 1, FI_ADDR_UNSPEC, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_read(a_.ep, buf, 8, nullptr, a_to_b_, 0, 0, nullptr),
            -FI_ENOSYS);
  // fi_getname: the size needed when the buffer is short.
  size_t len = 4;
  EXPECT_EQ(fi_getname(&a_.ep->fid, buf, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, kNameSize);
  EXPECT_EQ(fi_setname(&a_.ep->fid, buf, 4), -FI_ENOSYS);
  // An endpoint not yet enabled has no queue pair, so no name.
  fid_ep* idle = nullptr;
  ASSERT_EQ(fi_endpoint(node_.domain, node_.info, &idle, nullptr), 0);
  len = sizeof(buf) * 2;
  std::vector<char> name(len);
  EXPECT_EQ(fi_getname(&idle->fid, name.data(), &len), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_recv(idle, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC, nullptr),
            -FI_EOPBADSTATE);
  EXPECT_EQ(fi_enable(idle), -FI_ENOCQ);
  EXPECT_EQ(fi_close(&idle->fid), 0);
  // A new endpoint's first send, to no address at all.
  Endpoint fresh;
  ASSERT_EQ(fresh.Open(node_), 0);
  EXPECT_EQ(fi_send(fresh.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            -FI_EINVAL);
  // An MSG endpoint needs an MSG domain.
  fi_info* msg_info = fi_dupinfo(node_.info);
  msg_info->ep_attr->type = FI_EP_MSG;
  fid_ep* wrong = nullptr;
  EXPECT_EQ(fi_endpoint(node_.domain, msg_info, &wrong, nullptr),
            -FI_EINVAL);
  fi_freeinfo(msg_info);
  // Datagrams larger than the port's MTU are not offered.
  fi_info* large = fi_dupinfo(node_.info);
  large->ep_attr->max_msg_size = mtu_ + 1;
  EXPECT_EQ(fi_endpoint(node_.domain, large, &wrong, nullptr), -FI_EINVAL);
  fi_freeinfo(large);
  // The AV is in use by the endpoints.
  EXPECT_EQ(fi_close(&node_.av->fid), -FI_EBUSY);
}

TEST_F(VerbsDgramTest, TheAvRefusesMalformedNamesAndForgetsRemovedOnes) {
  // Queue pair number 0 (fi_info's source address) names no endpoint; a
  // reserved byte set is no name of ours.
  std::vector<char> names(3 * kNameSize);
  memcpy(names.data(), a_.name.data(), kNameSize);
  memcpy(names.data() + kNameSize, node_.info->src_addr, kNameSize);
  memcpy(names.data() + 2 * kNameSize, a_.name.data(), kNameSize);
  names[3 * kNameSize - 1] = 1;
  fi_addr_t addrs[3];
  int errors[3] = {-1, -1, -1};
  EXPECT_EQ(fi_av_insert(node_.av, names.data(), 3, addrs, FI_SYNC_ERR,
                         errors),
            1);
  EXPECT_EQ(errors[0], 0);
  EXPECT_EQ(errors[1], -FI_EINVAL);
  EXPECT_EQ(errors[2], -FI_EINVAL);
  EXPECT_EQ(addrs[1], FI_ADDR_NOTAVAIL);
  EXPECT_EQ(fi_av_insert(node_.av, names.data(), 1, addrs, FI_FENCE, nullptr),
            -FI_EBADFLAGS);
  EXPECT_EQ(fi_av_insertsvc(node_.av, "fe80::1", "1", addrs, 0, nullptr),
            -FI_ENOSYS);
  // Lookup returns the name; straddr writes it out.
  char looked_up[kNameSize];
  size_t len = sizeof(looked_up);
  ASSERT_EQ(fi_av_lookup(node_.av, addrs[0], looked_up, &len), 0);
  EXPECT_EQ(len, kNameSize);
  EXPECT_EQ(memcmp(looked_up, a_.name.data(), kNameSize), 0);
  char text[128];
  len = sizeof(text);
  ASSERT_NE(fi_av_straddr(node_.av, looked_up, text, &len), nullptr);
  EXPECT_EQ(strncmp(text, "fi_addr_ib_ud://[", 17), 0) << text;
  // Inserted twice, removed once: the other entry names the sender.
  fi_addr_t again = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(node_.av, a_.name.data(), 1, &again, 0, nullptr), 1);
  ASSERT_EQ(fi_av_remove(node_.av, &b_to_a_, 1, 0), 0);
  char probe[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, probe, sizeof(probe), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(a_.ep, probe, sizeof(probe), nullptr, a_to_b_, nullptr),
            0);
  ASSERT_EQ(a_.WaitFor(FI_SEND), 0);
  fi_cq_data_entry got;
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(b_.WaitFor(FI_RECV, &got, &source), 0);
  EXPECT_NE(source, FI_ADDR_NOTAVAIL);
  EXPECT_NE(source, b_to_a_);
  EXPECT_EQ(source, addrs[0]);
  b_to_a_ = again;
  // Removed: sends to it and lookups fail; other peers are unaffected.
  ASSERT_EQ(fi_av_remove(node_.av, &addrs[0], 1, 0), 0);
  EXPECT_EQ(fi_av_lookup(node_.av, addrs[0], looked_up, &len), -FI_EINVAL);
  char buf[8] = {};
  EXPECT_EQ(fi_send(b_.ep, buf, sizeof(buf), nullptr, addrs[0], nullptr),
            -FI_EINVAL);
  EXPECT_EQ(fi_av_remove(node_.av, &addrs[0], 1, 0), -FI_EINVAL);
  ASSERT_EQ(fi_recv(a_.ep, buf, sizeof(buf), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_send(b_.ep, buf, sizeof(buf), nullptr, b_to_a_, nullptr), 0);
  EXPECT_EQ(b_.WaitFor(FI_SEND), 0);
  EXPECT_EQ(a_.WaitFor(FI_RECV), 0);
}

// The child: an endpoint of its own (FI_MR_LOCAL, registered buffers) that
// sends its name up `to_parent`, reads the parent's from `from_parent`, and
// answers each of `count` datagrams with the same bytes, its next receive
// posted before it answers (else the parent's next datagram could find
// none). Exits 0 when all were answered.
int Echo(int to_parent, int from_parent, int count) {
  std::string why;
  Node node;
  if (node.Open(DgramInfo(true, &why)) != 0) return 2;
  Endpoint ep;
  if (ep.Open(node) != 0) return 3;
  const size_t mtu = node.info->ep_attr->max_msg_size;
  std::vector<char> buf(2 * mtu);
  fid_mr* mr = nullptr;
  if (fi_mr_reg(node.domain, buf.data(), buf.size(), FI_SEND | FI_RECV, 0, 0,
                0, &mr, nullptr) != 0) {
    return 4;
  }
  void* desc = fi_mr_desc(mr);
  if (fi_recv(ep.ep, buf.data(), mtu, desc, FI_ADDR_UNSPEC, nullptr) != 0) {
    return 5;
  }
  if (write(to_parent, ep.name.data(), kNameSize) != kNameSize) return 6;
  char parent[kNameSize];
  if (read(from_parent, parent, kNameSize) != kNameSize) return 7;
  fi_addr_t peer = FI_ADDR_NOTAVAIL;
  if (fi_av_insert(node.av, parent, 1, &peer, 0, nullptr) != 1) return 8;
  for (int i = 0; i < count; ++i) {
    char* arrived = buf.data() + (i % 2) * mtu;
    char* next = buf.data() + ((i + 1) % 2) * mtu;
    fi_cq_data_entry got;
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    if (ep.WaitFor(FI_RECV, &got, &source) != 0 || source != peer) return 9;
    if (fi_recv(ep.ep, next, mtu, desc, FI_ADDR_UNSPEC, nullptr) != 0) {
      return 10;
    }
    if (fi_send(ep.ep, arrived, got.len, desc, peer, nullptr) != 0) return 11;
    if (ep.WaitFor(FI_SEND) != 0) return 12;
  }
  fi_close(&mr->fid);
  return 0;
}

// The echo process is this program again (a child forked after the
// parent opened devices would share librdmacm's device contexts, which the
// kernel refuses to another process): run with kEchoEnv set to its pipes,
// the test is the child.
constexpr char kEchoEnv[] = "FABRIC_VERBS_DGRAM_ECHO_FDS";

pid_t SpawnEcho(int to_parent, int from_parent) {
  const ::testing::TestInfo* test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string filter = std::string("--gtest_filter=") +
                       test->test_suite_name() + "." + test->name();
  std::string fds = std::string(kEchoEnv) + "=" +
                    std::to_string(to_parent) + "," +
                    std::to_string(from_parent);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(fds.data());
  env.push_back(nullptr);
  char exe[] = "/proc/self/exe";
  char* argv[] = {exe, filter.data(), nullptr};
  pid_t child = fork();
  if (child == 0) {
    execve(exe, argv, env.data());
    _exit(127);
  }
  return child;
}

TEST(VerbsDgramProcessTest, AnEchoProcessAnswersEveryDatagram) {
  constexpr int kCount = 300;
  if (const char* fds = getenv(kEchoEnv)) {
    int up = -1, down = -1;
    if (sscanf(fds, "%d,%d", &up, &down) != 2) _exit(1);
    _exit(Echo(up, down, kCount));
  }
  std::string why;
  fi_info* info = DgramInfo(false, &why);
  if (info == nullptr) GTEST_SKIP() << why;
  int up[2], down[2];
  ASSERT_EQ(pipe(up), 0);
  ASSERT_EQ(pipe(down), 0);
  pid_t child = SpawnEcho(up[1], down[0]);
  ASSERT_GT(child, 0);
  Node node;
  ASSERT_EQ(node.Open(info), 0);
  Endpoint a;
  ASSERT_EQ(a.Open(node), 0);
  const size_t mtu = node.info->ep_attr->max_msg_size;
  char name[kNameSize];
  ASSERT_EQ(read(up[0], name, kNameSize), static_cast<ssize_t>(kNameSize));
  fi_addr_t echo = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(node.av, name, 1, &echo, 0, nullptr), 1);
  ASSERT_EQ(write(down[1], a.name.data(), kNameSize),
            static_cast<ssize_t>(kNameSize));
  std::vector<char> out(mtu), in(mtu);
  for (int i = 0; i < kCount; ++i) {
    const size_t size = 1 + (static_cast<size_t>(i) * 37) % mtu;
    for (size_t j = 0; j < size; ++j) out[j] = static_cast<char>(i + j);
    ASSERT_EQ(fi_recv(a.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
    ASSERT_EQ(fi_send(a.ep, out.data(), size, nullptr, echo, nullptr), 0);
    ASSERT_EQ(a.WaitFor(FI_SEND), 0);
    fi_cq_data_entry got;
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    ASSERT_EQ(a.WaitFor(FI_RECV, &got, &source), 0) << "datagram " << i;
    ASSERT_EQ(source, echo);
    ASSERT_EQ(got.len, size);
    ASSERT_EQ(memcmp(in.data(), out.data(), size), 0) << "datagram " << i;
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace fabric

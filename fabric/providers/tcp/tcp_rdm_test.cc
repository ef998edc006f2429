// tcp FI_EP_RDM endpoints: connectionless messages over connections made
// on demand (one per pair of endpoints, even when both connect at once),
// connects that fail, FI_SOURCE, directed receives, RMA, and reconnection
// after a peer goes away; all through the C API on 127.0.0.1.
#include <poll.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "fabric/providers/tcp/tcp_rdm_testing.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using tcp_rdm_testing::RdmEnd;
using tcp_rdm_testing::TcpRdmTest;

// With manual progress nothing moves between the calls: both endpoints
// surely connect before either sees the other's hello.
class TcpRdmManualTest : public TcpRdmTest {
 protected:
  TcpRdmManualTest() { data_progress_ = FI_PROGRESS_MANUAL; }
};

// A tagged message that finds no receive is buffered as it arrives; a
// receive posted before it has all arrived takes it (not the next one).
TEST_F(TcpRdmManualTest, AReceivePostedWhileAMessageArrivesTakesIt) {
  std::vector<char> big(4 << 20, 'b');
  ASSERT_EQ(fi_tsend(a_.ep, big.data(), big.size(), nullptr, b_.addr, 5,
                     nullptr),
            0);
  ASSERT_EQ(fi_tsend(a_.ep, "small", 6, nullptr, b_.addr, 5, nullptr), 0);
  // Over TCP (FI_TCP_SHM=0 in this test's target), until b has part of
  // the big message.
  auto* b = FidCast<tcp::TcpRdmEp>(b_.ep);
  auto arriving = [b] {
    for (const auto& link : b->links.all) {
      if (link->current_unexpected.has_value()) return true;
    }
    return false;
  };
  fi_cq_tagged_entry entry;
  for (int i = 0; i < 100000 && !arriving(); ++i) {
    fi_cq_read(a_.cq, &entry, 1);
    fi_cq_read(b_.rx_cq, &entry, 1);
  }
  ASSERT_TRUE(arriving());
  std::vector<char> into(big.size());
  char small[8] = {};
  ASSERT_EQ(fi_trecv(b_.ep, into.data(), into.size(), nullptr, FI_ADDR_UNSPEC,
                     5, 0, into.data()),
            0);
  ASSERT_EQ(fi_trecv(b_.ep, small, sizeof(small), nullptr, FI_ADDR_UNSPEC, 5,
                     0, small),
            0);
  for (int i = 0; i < 100000 && fi_cq_read(a_.cq, &entry, 1) != 1; ++i) {
    fi_cq_read(b_.rx_cq, nullptr, 0);
  }
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  EXPECT_EQ(entry.op_context, into.data());
  EXPECT_EQ(entry.len, big.size());
  EXPECT_EQ(into, big);
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  EXPECT_EQ(entry.op_context, small);
  EXPECT_STREQ(small, "small");
}

// Small sends go straight into the stream when nothing waits ahead of
// them; one the stream takes only part of (socket or ring full) keeps the
// rest, so every message arrives whole and in order, and an fi_inject
// buffer is free for reuse as soon as the call returns.
TEST_F(TcpRdmManualTest, SendsThatFillTheStreamArriveWholeAndInOrder) {
  ExpectDelivered(a_, b_.addr, b_, "connect first");
  constexpr int kMessages = 2000;
  std::vector<std::vector<char>> sent(kMessages);
  std::vector<char> scratch(loopback_.info->tx_attr->inject_size);
  int refused = 0;
  int completions = 0;
  fi_cq_tagged_entry entry;
  for (int i = 0; i < kMessages; ++i) {
    bool inject = i % 4 == 3;
    sent[i].resize(inject ? scratch.size() : 1000 + (i * 7919) % 15000);
    for (size_t j = 0; j < sent[i].size(); ++j) {
      sent[i][j] = static_cast<char>(i * 31 + j * 7);
    }
    ssize_t rc;
    while (true) {
      if (inject) {
        memcpy(scratch.data(), sent[i].data(), scratch.size());
        rc = fi_tinject(a_.ep, scratch.data(), scratch.size(), b_.addr, i);
        memset(scratch.data(), 0xee, scratch.size());
      } else {
        rc = fi_tsend(a_.ep, sent[i].data(), sent[i].size(), nullptr,
                      b_.addr, i, &sent[i]);
      }
      if (rc != -FI_EAGAIN) break;
      // Only once transmits queue behind a stream that takes no more.
      ++refused;
      if (fi_cq_read(a_.cq, &entry, 1) == 1) ++completions;
    }
    ASSERT_EQ(rc, 0) << "message " << i;
  }
  EXPECT_GT(refused, 0);
  std::vector<char> into(16 * 1024);
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(fi_trecv(b_.ep, into.data(), into.size(), nullptr,
                       FI_ADDR_UNSPEC, i, 0, nullptr),
              0);
    ASSERT_EQ(Wait(b_.rx_cq, &entry), 1) << "message " << i;
    ASSERT_EQ(entry.tag, static_cast<uint64_t>(i));
    ASSERT_EQ(entry.len, sent[i].size());
    ASSERT_EQ(memcmp(into.data(), sent[i].data(), entry.len), 0)
        << "message " << i;
  }
  while (completions < kMessages - kMessages / 4) {
    ASSERT_EQ(Wait(a_.cq, &entry), 1);
    ++completions;
  }
  EXPECT_EQ(fi_cq_read(a_.cq, &entry, 1), -FI_EAGAIN);
}

class TcpRdmWaitFdTest : public TcpRdmTest {
 protected:
  TcpRdmWaitFdTest() {
    data_progress_ = FI_PROGRESS_MANUAL;
    cq_wait_ = FI_WAIT_FD;
  }
};

// A busy polling loop takes the sockets out of the epoll sets (each packet
// would pay a wakeup callback); fi_trywait puts them back, so a CQ's wait
// fd wakes for a message that arrives while the application sleeps on it.
TEST_F(TcpRdmWaitFdTest, TheWaitFdWakesForAMessageAfterBusyPolling) {
  ExpectDelivered(a_, b_.addr, b_, "connect first");
  char into[16] = {};
  ASSERT_EQ(fi_recv(b_.ep, into, sizeof(into), nullptr, FI_ADDR_UNSPEC,
                    into),
            0);
  fi_cq_tagged_entry entry;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(fi_cq_read(b_.rx_cq, &entry, 1), -FI_EAGAIN);
  }
  int fd = -1;
  ASSERT_EQ(fi_control(&b_.rx_cq->fid, FI_GETWAIT, &fd), 0);
  fid* waiting[1] = {&b_.rx_cq->fid};
  ASSERT_EQ(fi_trywait(loopback_.fabric, waiting, 1), 0);
  ASSERT_EQ(fi_inject(a_.ep, "late", 5, b_.addr), 0);
  pollfd ready = {fd, POLLIN, 0};
  // Woken by the message (a hang guard, not a timing check).
  ASSERT_EQ(poll(&ready, 1, 10000), 1);
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  EXPECT_STREQ(into, "late");
}

TEST_F(TcpRdmTest, FirstSendConnectsAndTheSourceIsKnown) {
  ExpectDelivered(a_, b_.addr, b_, "hello b");
  // The answer takes the same connection back.
  ExpectDelivered(b_, a_.addr, a_, "hello a");
}

// An endpoint with few connections reads them without polling, and polls
// its listening socket on some passes only: new peers still get through,
// up to a third connection, where it polls every pass again.
TEST_F(TcpRdmTest, AnEndpointReadingItsConnectionsDirectlyAcceptsNewPeers) {
  ExpectDelivered(a_, b_.addr, b_, "a to b");
  RdmEnd c, d;
  OpenEnd(&c, {});
  OpenEnd(&d, {});
  ExpectDelivered(c, b_.addr, b_, "c to b");
  ExpectDelivered(b_, c.addr, c, "b to c");
  ExpectDelivered(d, b_.addr, b_, "d to b");
  ExpectDelivered(a_, b_.addr, b_, "a to b again");
  ExpectDelivered(b_, d.addr, d, "b to d");
  CloseEnd(&d);
  CloseEnd(&c);
}

TEST_F(TcpRdmTest, BothSidesSendingAtOnceKeepOrderPerPeer) {
  std::vector<int> in_a(20), in_b(20);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(fi_recv(a_.ep, &in_a[i], sizeof(int), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
    ASSERT_EQ(fi_recv(b_.ep, &in_b[i], sizeof(int), nullptr, FI_ADDR_UNSPEC,
                      nullptr),
              0);
  }
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(fi_inject(a_.ep, &i, sizeof(i), b_.addr), 0);
    ASSERT_EQ(fi_inject(b_.ep, &i, sizeof(i), a_.addr), 0);
  }
  fi_cq_tagged_entry entry;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(Wait(a_.rx_cq, &entry), 1);
    ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(in_a[i], i);
    EXPECT_EQ(in_b[i], i);
  }
}

TEST_F(TcpRdmManualTest, SimultaneousFirstSendsShareOneConnection) {
  ExchangeFromBothSidesAtOnce();
}

TEST_F(TcpRdmTest, SimultaneousFirstSendsShareOneConnection) {
  ExchangeFromBothSidesAtOnce();
}

TEST_F(TcpRdmTest, AFailedConnectFailsItsSendsAndALaterSendConnects) {
  // A socket that listens but is no endpoint: the connect succeeds, the
  // handshake does not.
  sockaddr_in name;
  int listener = LoopbackListener(1, &name);
  ASSERT_GE(listener, 0);
  fi_addr_t addr;
  ASSERT_EQ(fi_av_insert(loopback_.av, &name, 1, &addr, 0, nullptr), 1);
  int first, second, third;
  ASSERT_EQ(fi_send(a_.ep, "1", 2, nullptr, addr, &first), 0);
  ASSERT_EQ(fi_send(a_.ep, "2", 2, nullptr, addr, &second), 0);  // queues
  int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  close(accepted);
  close(listener);
  ExpectRefused(a_.cq, &first);
  ExpectRefused(a_.cq, &second);
  // Nothing listens there now. The kernel refuses the connect inside the
  // call or later, in progress.
  ssize_t rc = fi_send(a_.ep, "3", 2, nullptr, addr, &third);
  if (rc == 0) {
    ExpectRefused(a_.cq, &third);
  } else {
    EXPECT_EQ(rc, -FI_ECONNREFUSED);
  }
  // An endpoint appears at the address: the next send connects.
  RdmEnd c;
  Open(&c, &name);
  ExpectDelivered(a_, addr, c, "4");
  CloseEnd(&c);
}

// A peer host that drops the SYN: here a listener whose accept queue is
// full (backlog 0, one connection waiting), which the kernel answers by
// dropping further SYNs. The queued send fails with FI_ETIMEDOUT once the
// provider's connect timeout passes, instead of waiting for the kernel's
// SYN retries (minutes).
TEST_F(TcpRdmTest, AConnectThatNeverFinishesTimesOut) {
  sockaddr_in name;
  int listener = LoopbackListener(0, &name);
  ASSERT_GE(listener, 0);
  int filler = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(filler, reinterpret_cast<sockaddr*>(&name), sizeof(name)),
            0);
  fi_addr_t addr;
  ASSERT_EQ(fi_av_insert(loopback_.av, &name, 1, &addr, 0, nullptr), 1);
  int context;
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(fi_send(a_.ep, "1", 2, nullptr, addr, &context), 0);
  fi_cq_tagged_entry entry;
  ssize_t rc = -FI_EAGAIN;
  while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() - start <
                                 std::chrono::seconds(15)) {
    rc = fi_cq_read(a_.cq, &entry, 1);
  }
  ASSERT_EQ(rc, -FI_EAVAIL);
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(a_.cq, &error, 0), 1);
  EXPECT_EQ(error.err, FI_ETIMEDOUT);
  EXPECT_EQ(error.op_context, &context);
  // Not before the provider's connect timeout (5 s, tcp_rdm_ep.h).
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  close(filler);
  close(listener);
}

// A peer with another authorization key refuses the hello: the sends
// queued for it fail, and nothing arrives.
TEST_F(TcpRdmTest, APeerWithAnotherKeyRefusesTheConnection) {
  const char kKey[] = "another key";
  loopback_.info->ep_attr->auth_key = reinterpret_cast<uint8_t*>(strdup(kKey));
  loopback_.info->ep_attr->auth_key_size = sizeof(kKey);
  RdmEnd c;
  Open(&c);
  free(loopback_.info->ep_attr->auth_key);
  loopback_.info->ep_attr->auth_key = nullptr;
  loopback_.info->ep_attr->auth_key_size = 0;
  char in[8] = {};
  ASSERT_EQ(fi_recv(c.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  int first, second;
  ASSERT_EQ(fi_send(a_.ep, "1", 2, nullptr, c.addr, &first), 0);
  ASSERT_EQ(fi_send(a_.ep, "2", 2, nullptr, c.addr, &second), 0);
  ExpectRefused(a_.cq, &first);
  ExpectRefused(a_.cq, &second);
  fi_cq_tagged_entry entry;
  EXPECT_EQ(fi_cq_read(c.rx_cq, &entry, 1), -FI_EAGAIN);
  CloseEnd(&c);
}

TEST_F(TcpRdmTest, DirectedReceivesTakeOnlyTheirSource) {
  RdmEnd c;
  Open(&c);
  char from_a[8] = {}, from_c[8] = {};
  ASSERT_EQ(fi_trecv(b_.ep, from_c, sizeof(from_c), nullptr, c.addr, 1, 0,
                     nullptr),
            0);
  ASSERT_EQ(fi_trecv(b_.ep, from_a, sizeof(from_a), nullptr, a_.addr, 1, 0,
                     nullptr),
            0);
  ASSERT_EQ(fi_tinject(a_.ep, "a", 2, b_.addr, 1), 0);
  ASSERT_EQ(fi_tinject(c.ep, "c", 2, b_.addr, 1), 0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  EXPECT_STREQ(from_a, "a");
  EXPECT_STREQ(from_c, "c");
  CloseEnd(&c);
}

TEST_F(TcpRdmTest, RmaWriteAndReadThroughTheAv) {
  std::vector<char> target(4096, 0);
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, target.data(), target.size(),
                      FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, nullptr),
            0);
  uint64_t addr = reinterpret_cast<uint64_t>(target.data());
  std::vector<char> out(4096, 'r');
  ASSERT_EQ(fi_write(a_.ep, out.data(), out.size(), nullptr, b_.addr, addr,
                     fi_mr_key(mr), nullptr),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(target, out);
  std::vector<char> back(100);
  ASSERT_EQ(fi_read(a_.ep, back.data(), back.size(), nullptr, b_.addr,
                    addr + 10, fi_mr_key(mr), nullptr),
            0);
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(back, std::vector<char>(100, 'r'));
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpRdmTest, AtomicsThroughTheAv) {
  int64_t target[2] = {40, -3};
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, target, sizeof(target),
                      FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, nullptr),
            0);
  uint64_t addr = reinterpret_cast<uint64_t>(target);
  const int64_t add[2] = {2, 3};
  int context;
  ASSERT_EQ(fi_atomic(a_.ep, add, 2, nullptr, b_.addr, addr, fi_mr_key(mr),
                      FI_INT64, FI_SUM, &context),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(a_.cq, &entry), 1);
  EXPECT_EQ(entry.op_context, &context);
  EXPECT_EQ(entry.flags, FI_ATOMIC | FI_WRITE);
  EXPECT_EQ(target[0], 42);
  EXPECT_EQ(target[1], 0);
  const int64_t swap = 7, compare = 42;
  int64_t old = 0;
  ASSERT_EQ(fi_compare_atomic(b_.ep, &swap, 1, nullptr, &compare, nullptr,
                              &old, nullptr, a_.addr, addr, fi_mr_key(mr),
                              FI_INT64, FI_CSWAP, nullptr),
            0);
  ASSERT_EQ(Wait(b_.cq, &entry), 1);
  EXPECT_EQ(entry.flags, FI_ATOMIC | FI_READ);
  EXPECT_EQ(old, 42);
  EXPECT_EQ(target[0], 7);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

TEST_F(TcpRdmTest, APeerThatGoesAwayIsReachedAgainWhenItIsBack) {
  char in[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_inject(a_.ep, "1", 2, b_.addr), 0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  // b goes away: a's link breaks; a send then finds nobody listening (once
  // a notices, sends stop going to the old link).
  sockaddr_in b_name = Name(b_);
  fi_addr_t b_addr = b_.addr;
  CloseEnd(&b_);
  ssize_t rc = 0;
  for (int i = 0; i < 1000 && rc != -FI_ECONNREFUSED; ++i) {
    rc = fi_send(a_.ep, "2", 2, nullptr, b_addr, nullptr);
    if (rc != 0) continue;
    rc = Wait(a_.cq, &entry);  // 1: written before a noticed
    fi_cq_err_entry error = {};
    if (rc == -FI_EAVAIL && fi_cq_readerr(a_.cq, &error, 0) == 1) {
      rc = -error.err;
    }
  }
  EXPECT_EQ(rc, -FI_ECONNREFUSED);
  // b comes back at the same address: the next send connects again.
  Open(&b_);
  ASSERT_EQ(fi_setname(&b_.ep->fid, &b_name, sizeof(b_name)),
            -FI_EOPBADSTATE);  // enabled already: bound elsewhere
  CloseEnd(&b_);
  Open(&b_, &b_name);
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_inject(a_.ep, "3", 2, b_addr), 0);
  ASSERT_EQ(Wait(b_.rx_cq, &entry), 1);
  EXPECT_STREQ(in, "3");
}

// FI_SOURCE_ERR: a message from a peer the AV does not hold arrives, but
// its completion is an FI_EADDRNOTAVAIL error carrying the peer's address.
TEST_F(TcpRdmTest, UnknownSourcesAreReportedWithTheirAddress) {
  RdmEnd c;
  Open(&c);
  sockaddr_in c_name;
  size_t len = sizeof(c_name);
  ASSERT_EQ(fi_getname(&c.ep->fid, &c_name, &len), 0);
  // b no longer knows c.
  ASSERT_EQ(fi_av_remove(loopback_.av, &c.addr, 1, 0), 0);
  char in[8] = {};
  int context;
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, &context),
            0);
  ASSERT_EQ(fi_inject(c.ep, "from c", 7, b_.addr), 0);
  fi_cq_tagged_entry entry;
  ASSERT_EQ(Wait(b_.rx_cq, &entry), -FI_EAVAIL);
  fi_cq_err_entry error = {};
  ASSERT_EQ(fi_cq_readerr(b_.rx_cq, &error, 0), 1);
  EXPECT_EQ(error.err, FI_EADDRNOTAVAIL);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.len, 7u);
  ASSERT_EQ(error.err_data_size, sizeof(sockaddr_in));
  EXPECT_EQ(memcmp(error.err_data, &c_name, sizeof(c_name)), 0);
  EXPECT_STREQ(in, "from c");
  CloseEnd(&c);
}

// FI_SOURCE without FI_SOURCE_ERR: a message from a peer the AV does not
// hold completes with FI_ADDR_NOTAVAIL; once fi_av_insert adds the peer's
// address, its next messages on the same connection report the new entry
// (the RDS example's flow: the client's hello carries its address).
TEST_F(TcpRdmTest, SourcesInsertedLaterAreReported) {
  fi_info* info = fi_dupinfo(loopback_.info);
  info->caps &= ~FI_SOURCE_ERR;
  RdmEnd c;
  Open(&c);
  sockaddr_in c_name = Name(c);
  // b no longer knows c.
  ASSERT_EQ(fi_av_remove(loopback_.av, &c.addr, 1, 0), 0);
  CloseEnd(&b_);
  fi_info* saved = loopback_.info;
  loopback_.info = info;
  Open(&b_);  // b, now without FI_SOURCE_ERR
  loopback_.info = saved;
  char in[8] = {};
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_inject(c.ep, "1", 2, b_.addr), 0);
  fi_cq_tagged_entry entry;
  fi_addr_t source = 0;
  ASSERT_EQ(Wait(b_.rx_cq, &entry, &source), 1);
  EXPECT_EQ(source, FI_ADDR_NOTAVAIL);
  fi_addr_t c_addr = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(loopback_.av, &c_name, 1, &c_addr, 0, nullptr), 1);
  ASSERT_EQ(fi_recv(b_.ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, nullptr),
            0);
  ASSERT_EQ(fi_inject(c.ep, "2", 2, b_.addr), 0);
  ASSERT_EQ(Wait(b_.rx_cq, &entry, &source), 1);
  EXPECT_STREQ(in, "2");
  EXPECT_EQ(source, c_addr);
  // The answer reaches c.
  char back[8] = {};
  ASSERT_EQ(fi_recv(c.ep, back, sizeof(back), nullptr, FI_ADDR_UNSPEC,
                    nullptr),
            0);
  ASSERT_EQ(fi_inject(b_.ep, "3", 2, c_addr), 0);
  ASSERT_EQ(Wait(c.rx_cq, &entry), 1);
  EXPECT_STREQ(back, "3");
  CloseEnd(&c);
  fi_freeinfo(info);
}

TEST_F(TcpRdmTest, BadAddressesAndStates) {
  EXPECT_EQ(fi_inject(a_.ep, "x", 2, 12345), -FI_EINVAL);  // not in the AV
  EXPECT_EQ(fi_inject(a_.ep, "x", 2, FI_ADDR_NOTAVAIL), -FI_EINVAL);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &ep, nullptr), 0);
  EXPECT_EQ(fi_enable(ep), -FI_ENOCQ);
  ASSERT_EQ(fi_ep_bind(ep, &a_.cq->fid, FI_TRANSMIT | FI_RECV), 0);
  EXPECT_EQ(fi_enable(ep), -FI_ENOAV);
  EXPECT_EQ(fi_send(ep, "x", 2, nullptr, b_.addr, nullptr), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_connect(ep, nullptr, nullptr, 0), -FI_ENOSYS);
  size_t len = 2;
  char name[2];
  EXPECT_EQ(fi_getname(&ep->fid, name, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  EXPECT_EQ(fi_close(&ep->fid), 0);
}

}  // namespace
}  // namespace fabric

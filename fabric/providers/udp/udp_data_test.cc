// The udp provider's data path between two endpoints on 127.0.0.1, through
// the C API: sends and receives with their data, completions and counters.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <chrono>
#include <vector>

#include "fabric/providers/udp/udp_test_fixture.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

constexpr size_t kMaxMsgSize = 65507;

class UdpDataTest : public UdpLoopbackTest {};

TEST_F(UdpDataTest, SendDeliversTheBytesAndBothSidesComplete) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  for (size_t size : {size_t{0}, size_t{1}, size_t{1000}, kMaxMsgSize}) {
    SCOPED_TRACE(size);
    std::vector<char> out = Pattern(size, 1);
    std::vector<char> in(kMaxMsgSize + 16, 0);
    int send_context = 0;
    int recv_context = 0;
    ASSERT_EQ(fi_recv(b.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC,
                      &recv_context),
              0);
    ASSERT_EQ(
        fi_send(a.ep, out.data(), out.size(), nullptr, b.addr, &send_context),
        0);
    fi_cq_tagged_entry sent;
    ASSERT_TRUE(ReadCompletion(a.cq, &sent));
    EXPECT_EQ(sent.op_context, &send_context);
    EXPECT_EQ(sent.flags, FI_SEND | FI_MSG);
    fi_cq_tagged_entry got;
    ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
    EXPECT_EQ(got.op_context, &recv_context);
    EXPECT_EQ(got.flags, FI_RECV | FI_MSG);
    EXPECT_EQ(got.len, size);
    EXPECT_EQ(std::vector<char>(in.begin(), in.begin() + size), out);
  }
  EXPECT_TRUE(StaysEmpty(a.rx_cq));
  EXPECT_TRUE(StaysEmpty(b.cq));
}

TEST_F(UdpDataTest, ReceivesCompleteInTheOrderPosted) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[3][64];
  int contexts[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(fi_recv(b.ep, in[i], sizeof(in[i]), nullptr, 0, &contexts[i]), 0);
  }
  for (int i = 0; i < 3; ++i) {
    std::vector<char> out = Pattern(10 * (i + 1), i);
    ASSERT_EQ(fi_send(a.ep, out.data(), out.size(), nullptr, b.addr, nullptr),
              0);
  }
  for (int i = 0; i < 3; ++i) {
    fi_cq_tagged_entry got;
    ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
    EXPECT_EQ(got.op_context, &contexts[i]);
    EXPECT_EQ(got.len, 10u * (i + 1));
    EXPECT_EQ(memcmp(in[i], Pattern(got.len, i).data(), got.len), 0);
  }
}

TEST_F(UdpDataTest, SendvAndRecvvGatherAndScatter) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  std::vector<char> message = Pattern(300, 7);
  iovec out[3] = {{message.data(), 100},
                  {message.data() + 100, 0},
                  {message.data() + 100, 200}};
  char first[50];
  char second[400];
  iovec in[2] = {{first, sizeof(first)}, {second, sizeof(second)}};
  ASSERT_EQ(fi_recvv(b.ep, in, nullptr, 2, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_sendv(a.ep, out, nullptr, 3, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_EQ(got.len, 300u);
  EXPECT_EQ(memcmp(first, message.data(), 50), 0);
  EXPECT_EQ(memcmp(second, message.data() + 50, 250), 0);
}

TEST_F(UdpDataTest, SendmsgAndRecvmsgCarryContextsAndDescriptors) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  std::vector<char> out = Pattern(512, 3);
  std::vector<char> in(512);
  fid_mr* out_mr = nullptr;
  fid_mr* in_mr = nullptr;
  ASSERT_EQ(fi_mr_reg(loopback_.domain, out.data(), out.size(), FI_SEND, 0, 1,
                      0, &out_mr, nullptr),
            0);
  ASSERT_EQ(fi_mr_reg(loopback_.domain, in.data(), in.size(), FI_RECV, 0, 2, 0,
                      &in_mr, nullptr),
            0);
  void* in_desc = fi_mr_desc(in_mr);
  void* out_desc = fi_mr_desc(out_mr);
  iovec in_iov = {in.data(), in.size()};
  iovec out_iov = {out.data(), out.size()};
  int recv_context = 0;
  int send_context = 0;
  fi_msg recv_msg = {&in_iov, &in_desc, 1, FI_ADDR_UNSPEC, &recv_context, 0};
  fi_msg send_msg = {&out_iov, &out_desc, 1, b.addr, &send_context, 0};
  ASSERT_EQ(fi_recvmsg(b.ep, &recv_msg, FI_COMPLETION), 0);
  ASSERT_EQ(fi_sendmsg(a.ep, &send_msg, FI_COMPLETION | FI_TRANSMIT_COMPLETE),
            0);
  fi_cq_tagged_entry entry;
  ASSERT_TRUE(ReadCompletion(a.cq, &entry));
  EXPECT_EQ(entry.op_context, &send_context);
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &entry));
  EXPECT_EQ(entry.op_context, &recv_context);
  EXPECT_EQ(in, out);
  EXPECT_EQ(fi_close(&in_mr->fid), 0);
  EXPECT_EQ(fi_close(&out_mr->fid), 0);
}

TEST_F(UdpDataTest, InjectCountsWithoutACompletion) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  EndpointOptions options;
  options.counters = true;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint(options);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[64] = {};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  char out[] = "injected";
  ASSERT_EQ(fi_inject(a.ep, out, sizeof(out), b.addr), 0);
  memset(out, 'x', sizeof(out));  // the buffer is the caller's again
  EXPECT_EQ(fi_cntr_read(a.tx_cntr), 1u);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_STREQ(in, "injected");
  EXPECT_EQ(fi_cntr_read(b.rx_cntr), 1u);
  EXPECT_TRUE(StaysEmpty(a.cq));

  // fi_sendmsg with FI_INJECT copies too, but completes like any send.
  char again[] = "again";
  iovec iov = {again, sizeof(again)};
  fi_msg msg = {&iov, nullptr, 1, b.addr, again, 0};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_sendmsg(a.ep, &msg, FI_INJECT), 0);
  memset(again, 'x', sizeof(again));
  fi_cq_tagged_entry sent;
  ASSERT_TRUE(ReadCompletion(a.cq, &sent));
  EXPECT_EQ(sent.op_context, again);
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_STREQ(in, "again");
  EXPECT_EQ(fi_cntr_read(a.tx_cntr), 2u);
}

TEST_F(UdpDataTest, LongerDatagramTruncatesWithEtrunc) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  EndpointOptions options;
  options.counters = true;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint(options);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[10];
  int context = 0;
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, &context), 0);
  std::vector<char> out = Pattern(25, 5);
  ASSERT_EQ(fi_send(a.ep, out.data(), out.size(), nullptr, b.addr, nullptr), 0);
  fi_cq_err_entry error;
  ASSERT_TRUE(ReadError(b.rx_cq, &error));
  EXPECT_EQ(error.err, FI_ETRUNC);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(error.len, 10u);
  EXPECT_EQ(error.olen, 15u);
  EXPECT_EQ(memcmp(in, out.data(), sizeof(in)), 0);
  EXPECT_EQ(fi_cntr_readerr(b.rx_cntr), 1u);
  EXPECT_EQ(fi_cntr_read(b.rx_cntr), 0u);
}

TEST_F(UdpDataTest, ReadfromNamesTheSenderWithFiSource) {
  ASSERT_NO_FATAL_FAILURE(
      OpenDomain([](fi_info* hints) { hints->caps |= FI_SOURCE; }));
  ASSERT_TRUE(loopback_.info->caps & FI_SOURCE);
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  EndpointOptions stranger;
  stranger.insert_in_av = false;
  TestEndpoint& c = OpenEndpoint(stranger);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr && c.ep != nullptr);
  char in[2][16];
  ASSERT_EQ(fi_recv(b.ep, in[0], sizeof(in[0]), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_recv(b.ep, in[1], sizeof(in[1]), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "from a", 7, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  fi_addr_t source = 12345;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got, &source));
  EXPECT_EQ(source, a.addr);
  ASSERT_EQ(fi_send(c.ep, "from c", 7, nullptr, b.addr, nullptr), 0);
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got, &source));
  EXPECT_EQ(source, FI_ADDR_NOTAVAIL);
}

TEST_F(UdpDataTest, WithoutFiSourceReadfromSaysNotAvailable) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  ASSERT_FALSE(loopback_.info->caps & FI_SOURCE);
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[16];
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "x", 1, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  fi_addr_t source = 0;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got, &source));
  EXPECT_EQ(source, FI_ADDR_NOTAVAIL);
}

TEST_F(UdpDataTest, SelectiveCompletionReportsOnlyFiCompletion) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  EndpointOptions options;
  options.counters = true;
  options.tx_cq_flags = FI_TRANSMIT | FI_SELECTIVE_COMPLETION;
  options.rx_cq_flags = FI_RECV | FI_SELECTIVE_COMPLETION;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint(options);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);

  char in[16] = {};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "quiet", 6, nullptr, b.addr, nullptr), 0);
  EXPECT_EQ(fi_cntr_read(a.tx_cntr), 1u);
  EXPECT_EQ(fi_cntr_wait(b.rx_cntr, 1, 5000), 0);
  EXPECT_STREQ(in, "quiet");
  EXPECT_TRUE(StaysEmpty(a.cq));
  EXPECT_TRUE(StaysEmpty(b.rx_cq));

  int recv_context = 0;
  int send_context = 0;
  iovec in_iov = {in, sizeof(in)};
  fi_msg recv_msg = {&in_iov, nullptr, 1, FI_ADDR_UNSPEC, &recv_context, 0};
  ASSERT_EQ(fi_recvmsg(b.ep, &recv_msg, FI_COMPLETION), 0);
  iovec out_iov = {const_cast<char*>("loud"), 5};
  fi_msg send_msg = {&out_iov, nullptr, 1, b.addr, &send_context, 0};
  ASSERT_EQ(fi_sendmsg(a.ep, &send_msg, FI_COMPLETION), 0);
  fi_cq_tagged_entry entry;
  ASSERT_TRUE(ReadCompletion(a.cq, &entry));
  EXPECT_EQ(entry.op_context, &send_context);
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &entry));
  EXPECT_EQ(entry.op_context, &recv_context);
  EXPECT_STREQ(in, "loud");

  // FI_COMPLETION as the endpoint's default transmit flag.
  uint64_t flags = FI_TRANSMIT | FI_COMPLETION;
  ASSERT_EQ(fi_control(&a.ep->fid, FI_SETOPSFLAG, &flags), 0);
  flags = FI_TRANSMIT;
  ASSERT_EQ(fi_control(&a.ep->fid, FI_GETOPSFLAG, &flags), 0);
  EXPECT_EQ(flags, FI_COMPLETION);
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "set", 4, nullptr, b.addr, &send_context), 0);
  ASSERT_TRUE(ReadCompletion(a.cq, &entry));
  EXPECT_EQ(entry.op_context, &send_context);
  EXPECT_EQ(fi_cntr_wait(b.rx_cntr, 3, 5000), 0);
  EXPECT_EQ(fi_cntr_read(a.tx_cntr), 3u);
}

TEST_F(UdpDataTest, CountersAloneTrackAnEndpointWithoutCqs) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  EndpointOptions options;
  options.cqs = false;
  options.counters = true;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint(options);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[4];
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "abc", 4, nullptr, b.addr, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "too long", 9, nullptr, b.addr, nullptr), 0);
  EXPECT_EQ(fi_cntr_read(a.tx_cntr), 2u);
  // The second datagram does not fit: an error count, no CQ to tell. (Not
  // fi_cntr_wait: it returns -FI_EAVAIL once the error is counted, which
  // progress may do before the first datagram's count is waited for.)
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((fi_cntr_read(b.rx_cntr) == 0 || fi_cntr_readerr(b.rx_cntr) == 0) &&
         std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_EQ(fi_cntr_readerr(b.rx_cntr), 1u);
  EXPECT_EQ(fi_cntr_read(b.rx_cntr), 1u);
}

TEST_F(UdpDataTest, CancelledReceiveCompletesWithEcanceled) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(b.ep != nullptr);
  char in[16];
  int context = 0;
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, &context), 0);
  EXPECT_EQ(RxSizeLeft(b.ep),
            static_cast<ssize_t>(loopback_.info->rx_attr->size - 1));
  ASSERT_EQ(fi_cancel(&b.ep->fid, &context), 0);
  fi_cq_err_entry error;
  ASSERT_TRUE(ReadError(b.rx_cq, &error));
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(fi_cancel(&b.ep->fid, &context), -FI_ENOENT);
  int other = 0;
  EXPECT_EQ(fi_cancel(&b.ep->fid, &other), -FI_ENOENT);
  EXPECT_EQ(RxSizeLeft(b.ep),
            static_cast<ssize_t>(loopback_.info->rx_attr->size));
}

TEST_F(UdpDataTest, DatagramWithoutAPostedReceiveIsDropped) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  ASSERT_EQ(fi_send(a.ep, "first", 6, nullptr, b.addr, nullptr), 0);
  // Progress runs while b has no receive posted.
  EXPECT_TRUE(StaysEmpty(b.rx_cq));
  char in[16] = {};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "second", 7, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_EQ(got.len, 7u);
  EXPECT_STREQ(in, "second");
}

TEST_F(UdpDataTest, ReceiveQueueIsLimitedByRxSize) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  fi_info* small = fi_dupinfo(loopback_.info);
  small->rx_attr->size = 2;
  EndpointOptions options;
  options.info = small;
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint(options);
  fi_freeinfo(small);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[3][8];
  ASSERT_EQ(fi_recv(b.ep, in[0], 8, nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_recv(b.ep, in[1], 8, nullptr, 0, nullptr), 0);
  EXPECT_EQ(RxSizeLeft(b.ep), 0);
  EXPECT_EQ(fi_recv(b.ep, in[2], 8, nullptr, 0, nullptr), -FI_EAGAIN);
  ASSERT_EQ(fi_send(a.ep, "one", 4, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_EQ(fi_recv(b.ep, in[2], 8, nullptr, 0, nullptr), 0);
}

TEST_F(UdpDataTest, FullTransmitCqRefusesSendsUntilRead) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  EndpointOptions options;
  options.cq_size = 1;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  ASSERT_EQ(fi_send(a.ep, "1", 1, nullptr, b.addr, nullptr), 0);
  EXPECT_EQ(fi_send(a.ep, "2", 1, nullptr, b.addr, nullptr), -FI_EAGAIN);
  fi_cq_tagged_entry entry;
  ASSERT_TRUE(ReadCompletion(a.cq, &entry));
  EXPECT_EQ(fi_send(a.ep, "3", 1, nullptr, b.addr, nullptr), 0);
}

TEST_F(UdpDataTest, ClosingReleasesTheReceiveCqSlotsOfPostedReceives) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain());
  fi_cq_attr attr = {};
  attr.size = 2;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(loopback_.domain, &attr, &cq, nullptr), 0);
  char in[8];
  for (int round = 0; round < 2; ++round) {
    fid_ep* ep = nullptr;
    ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_ep_bind(ep, &loopback_.av->fid, 0), 0);
    ASSERT_EQ(fi_enable(ep), 0);
    EXPECT_EQ(fi_recv(ep, in, 8, nullptr, 0, nullptr), 0);
    EXPECT_EQ(fi_recv(ep, in, 8, nullptr, 0, nullptr), 0);
    EXPECT_EQ(fi_recv(ep, in, 8, nullptr, 0, nullptr), -FI_EAGAIN);
    EXPECT_EQ(fi_close(&ep->fid), 0);
  }
  EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(UdpDataTest, ManualProgressWithoutLocking) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain([](fi_info* hints) {
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  }));
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char in[8] = {};
  ASSERT_EQ(fi_recv(b.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, "manual", 7, nullptr, b.addr, nullptr), 0);
  fi_cq_tagged_entry got;
  ASSERT_TRUE(ReadCompletion(b.rx_cq, &got));
  EXPECT_STREQ(in, "manual");
}

}  // namespace
}  // namespace fabric

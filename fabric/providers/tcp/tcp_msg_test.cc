// Messages and tagged messages over tcp MSG endpoints.
#include <poll.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <numeric>
#include <string>
#include <vector>

#include "fabric/providers/tcp/msg_pair_test.h"

namespace fabric {
namespace {

class TcpMsgTest : public MsgPairTest {};

std::vector<char> Pattern(size_t size, int seed) {
  std::vector<char> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 31 + seed);
  return data;
}

TEST_F(TcpMsgTest, ConnectionDataTravelsBothWays) {
  PairOptions options;
  options.client_data = "hello from the client";
  options.server_data = "welcome";
  Connect(options);
  EXPECT_EQ(connreq_data_, options.client_data);
  EXPECT_EQ(connected_data_, options.server_data);
  size_t size = 0;
  size_t len = sizeof(size);
  ASSERT_EQ(fi_getopt(&client_.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE,
                      &size, &len),
            0);
  EXPECT_EQ(size, 256u);
}

TEST_F(TcpMsgTest, SendAndReceive) {
  Connect();
  std::vector<char> out = Pattern(1000, 1);
  std::vector<char> in(2000);
  int recv_context, send_context;
  ASSERT_EQ(fi_recv(server_.ep, in.data(), in.size(), nullptr, 0,
                    &recv_context),
            0);
  ASSERT_EQ(fi_send(client_.ep, out.data(), out.size(), nullptr, 0,
                    &send_context),
            0);
  fi_cq_tagged_entry sent = WaitCompletion(client_.cq);
  EXPECT_EQ(sent.op_context, &send_context);
  EXPECT_EQ(sent.flags, FI_SEND | FI_MSG);
  fi_cq_tagged_entry received = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(received.op_context, &recv_context);
  EXPECT_EQ(received.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(received.len, out.size());
  EXPECT_EQ(received.buf, in.data());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), in.begin()));
  EXPECT_EQ(fi_cntr_read(client_.tx_cntr), 1u);
  EXPECT_EQ(fi_cntr_read(server_.rx_cntr), 1u);
}

TEST_F(TcpMsgTest, LargeVectoredMessagesArriveIntactInOrder) {
  Connect();
  // 3 pieces of 3 MiB in all, twice, into differently cut receive buffers.
  const size_t total = 3 << 20;
  for (int round = 0; round < 2; ++round) {
    std::vector<char> out = Pattern(total, round);
    std::vector<char> in(total);
    iovec send_iov[3] = {{out.data(), 1000},
                         {out.data() + 1000, total / 2},
                         {out.data() + 1000 + total / 2, total / 2 - 1000}};
    iovec recv_iov[2] = {{in.data(), 12345}, {in.data() + 12345, total - 12345}};
    ASSERT_EQ(fi_recvv(server_.ep, recv_iov, nullptr, 2, 0, nullptr), 0);
    ASSERT_EQ(fi_sendv(client_.ep, send_iov, nullptr, 3, 0, nullptr), 0);
    WaitCompletion(client_.cq);
    EXPECT_EQ(WaitCompletion(server_.rx_cq).len, total);
    EXPECT_TRUE(out == in) << "round " << round;
  }
}

TEST_F(TcpMsgTest, MessagesWaitForAReceive) {
  Connect();
  std::vector<char> out = Pattern(100, 2);
  ASSERT_EQ(fi_send(client_.ep, out.data(), out.size(), nullptr, 0, nullptr),
            0);
  // No receive posted: the message waits (resource management enabled).
  EXPECT_TRUE(StaysEmpty(server_.rx_cq, 100));
  std::vector<char> in(100);
  ASSERT_EQ(fi_recv(server_.ep, in.data(), in.size(), nullptr, 0, nullptr),
            0);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).len, 100u);
  EXPECT_TRUE(out == in);
}

// fi_domain(3), reliable endpoints without resource management: a message
// that finds no receive fails the sender's transmit with FI_ENORX, and the
// error disables the connection.
TEST_F(TcpMsgTest, WithoutResourceManagementNoReceiveIsATransmitError) {
  PairOptions options;
  options.resource_mgmt = FI_RM_DISABLED;
  Connect(options);
  ASSERT_EQ(client_.info->domain_attr->resource_mgmt, FI_RM_DISABLED);
  char in[8];
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(client_.ep, "one", 4, nullptr, 0, nullptr), 0);
  WaitCompletion(server_.rx_cq);  // taken: its send completes
  WaitCompletion(client_.cq);
  int context;
  ASSERT_EQ(fi_send(client_.ep, "two", 4, nullptr, 0, &context), 0);
  fi_cq_err_entry error = WaitError(client_.cq);
  EXPECT_EQ(error.err, FI_ENORX);
  EXPECT_EQ(error.op_context, &context);
  std::vector<char> event;
  EXPECT_EQ(WaitEvent(client_.eq, &event), FI_SHUTDOWN);
  EXPECT_EQ(WaitEvent(server_.eq, &event), FI_SHUTDOWN);
}

// An application that sleeps in poll(2) on a CQ's wait fd wakes for data
// that only its next read will process (manual progress): the fd also
// watches the domain's sockets.
TEST_F(TcpMsgTest, CqWaitFdWakesPollForManualProgress) {
  PairOptions options;
  options.cq_wait_obj = FI_WAIT_FD;
  Connect(options);
  int fd = -1;
  ASSERT_EQ(fi_control(&server_.rx_cq->fid, FI_GETWAIT, &fd), 0);
  char in[8];
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  fid* objects[] = {&server_.rx_cq->fid};
  ASSERT_EQ(fi_trywait(server_.fabric, objects, 1), 0);  // may sleep
  pollfd ready = {fd, POLLIN, 0};
  EXPECT_EQ(poll(&ready, 1, 0), 0);  // nothing yet
  ASSERT_EQ(fi_inject(client_.ep, "wake", 5, 0), 0);
  ASSERT_EQ(poll(&ready, 1, 5000), 1);  // the socket's data wakes it
  fi_cq_tagged_entry entry;
  EXPECT_EQ(fi_cq_read(server_.rx_cq, &entry, 1), 1);
  EXPECT_STREQ(in, "wake");
  // fi_cq_sread blocks until the next completion arrives.
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_inject(client_.ep, "more", 5, 0), 0);
  EXPECT_EQ(fi_cq_sread(server_.rx_cq, &entry, 1, nullptr, 5000), 1);
  EXPECT_STREQ(in, "more");
}

TEST_F(TcpMsgTest, InjectHasNoCompletionButCounts) {
  Connect();
  std::vector<char> in(64);
  ASSERT_EQ(fi_recv(server_.ep, in.data(), in.size(), nullptr, 0, nullptr),
            0);
  char message[] = "injected";
  ASSERT_EQ(fi_inject(client_.ep, message, sizeof(message), 0), 0);
  message[0] = 'X';  // the buffer is free at once
  EXPECT_EQ(WaitCompletion(server_.rx_cq).len, sizeof(message));
  EXPECT_STREQ(in.data(), "injected");
  EXPECT_TRUE(StaysEmpty(client_.cq, 20));
  EXPECT_EQ(fi_cntr_read(client_.tx_cntr), 1u);
  std::vector<char> big(client_.info->tx_attr->inject_size + 1);
  EXPECT_EQ(fi_inject(client_.ep, big.data(), big.size(), 0), -FI_EINVAL);
}

TEST_F(TcpMsgTest, RemoteCqDataReachesTheReceiver) {
  Connect();
  char in[16];
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_senddata(client_.ep, "a", 1, nullptr, 0xabcdef, 0, nullptr), 0);
  ASSERT_EQ(fi_injectdata(client_.ep, "b", 1, 42, 0), 0);
  fi_cq_tagged_entry first = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(first.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(first.data, 0xabcdefu);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).data, 42u);
}

TEST_F(TcpMsgTest, ShortReceiveBufferTruncates) {
  Connect();
  char in[10];
  int context;
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, &context), 0);
  std::vector<char> out = Pattern(100, 3);
  ASSERT_EQ(fi_send(client_.ep, out.data(), out.size(), nullptr, 0, nullptr),
            0);
  fi_cq_err_entry error = WaitError(server_.rx_cq);
  EXPECT_EQ(error.err, FI_ETRUNC);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.olen, 90u);
  EXPECT_TRUE(std::equal(in, in + 10, out.begin()));
  // The stream is still in step: the next message arrives whole.
  char next[100];
  ASSERT_EQ(fi_recv(server_.ep, next, sizeof(next), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(client_.ep, out.data(), 50, nullptr, 0, nullptr), 0);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).len, 50u);
}

TEST_F(TcpMsgTest, MultiRecvFillsOneBuffer) {
  Connect();
  size_t min = 300;
  ASSERT_EQ(fi_setopt(&server_.ep->fid, FI_OPT_ENDPOINT,
                      FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)),
            0);
  std::vector<char> buffer(1000);
  iovec iov = {buffer.data(), buffer.size()};
  int context;
  fi_msg msg = {&iov, nullptr, 1, 0, &context, 0};
  ASSERT_EQ(fi_recvmsg(server_.ep, &msg, FI_MULTI_RECV), 0);
  for (int i = 0; i < 3; ++i) {
    std::vector<char> out = Pattern(300, i);
    ASSERT_EQ(fi_send(client_.ep, out.data(), out.size(), nullptr, 0,
                      nullptr),
              0);
    fi_cq_tagged_entry entry = WaitCompletion(server_.rx_cq);
    EXPECT_EQ(entry.op_context, &context);
    EXPECT_EQ(entry.buf, buffer.data() + 300 * i);
    EXPECT_EQ(entry.len, 300u);
    // The third leaves 100 bytes, less than the minimum: buffer released.
    EXPECT_EQ((entry.flags & FI_MULTI_RECV) != 0, i == 2);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), buffer.begin() + 300 * i));
  }
}

TEST_F(TcpMsgTest, TaggedMessagesMatchByTagWhateverTheOrder) {
  Connect();
  std::vector<char> a = Pattern(5000, 4), b = Pattern(70, 5);
  ASSERT_EQ(fi_tsend(client_.ep, a.data(), a.size(), nullptr, 0, 0x100,
                     nullptr),
            0);
  ASSERT_EQ(fi_tsend(client_.ep, b.data(), b.size(), nullptr, 0, 0x200,
                     nullptr),
            0);
  // Both arrive before any receive: buffered as unexpected.
  EXPECT_TRUE(StaysEmpty(server_.rx_cq, 50));
  std::vector<char> in_b(100), in_a(5000);
  int context_b, context_a;
  ASSERT_EQ(fi_trecv(server_.ep, in_b.data(), in_b.size(), nullptr, 0, 0x200,
                     0, &context_b),
            0);
  fi_cq_tagged_entry entry = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(entry.op_context, &context_b);
  EXPECT_EQ(entry.tag, 0x200u);
  EXPECT_EQ(entry.flags, FI_RECV | FI_TAGGED);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), in_b.begin()));
  // The ignore bits let 0x1ff match 0x100.
  ASSERT_EQ(fi_trecv(server_.ep, in_a.data(), in_a.size(), nullptr, 0, 0x1ff,
                     0xff, &context_a),
            0);
  entry = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(entry.op_context, &context_a);
  EXPECT_EQ(entry.tag, 0x100u);
  EXPECT_TRUE(a == in_a);
  // A posted receive takes a later message directly.
  ASSERT_EQ(fi_trecv(server_.ep, in_b.data(), in_b.size(), nullptr, 0, 7, 0,
                     nullptr),
            0);
  ASSERT_EQ(fi_tinject(client_.ep, "seven", 6, 0, 7), 0);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).len, 6u);
  EXPECT_STREQ(in_b.data(), "seven");
}

// fi_tagged(3): FI_PEEK reports a buffered message without taking it,
// FI_PEEK | FI_CLAIM sets it aside for the paired FI_CLAIM receive,
// FI_DISCARD drops it; no match is an FI_ENOMSG error.
TEST_F(TcpMsgTest, PeekClaimAndDiscardTaggedMessages) {
  Connect();
  ASSERT_EQ(fi_tsenddata(client_.ep, "first", 6, nullptr, 77, 0, 0x10, nullptr),
            0);
  ASSERT_EQ(fi_tinject(client_.ep, "second", 7, 0, 0x20), 0);
  EXPECT_TRUE(StaysEmpty(server_.rx_cq, 50));  // both buffered
  fi_context peek_context;
  fi_msg_tagged msg = {};
  msg.tag = 0x10;
  msg.context = &peek_context;
  ASSERT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK), 0);
  fi_cq_tagged_entry entry = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(entry.op_context, &peek_context);
  EXPECT_EQ(entry.len, 6u);
  EXPECT_EQ(entry.tag, 0x10u);
  EXPECT_EQ(entry.data, 77u);
  EXPECT_EQ(entry.flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
  // Peeked, not taken: peek again and claim it.
  fi_context claim_context;
  msg.context = &claim_context;
  ASSERT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK | FI_CLAIM), 0);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).op_context, &claim_context);
  // Claimed: a plain receive for tag 0x10 no longer finds it.
  msg.context = &peek_context;
  ASSERT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK), 0);
  EXPECT_EQ(WaitError(server_.rx_cq).err, FI_ENOMSG);
  char buf[16] = {};
  iovec iov = {buf, sizeof(buf)};
  fi_msg_tagged claim = {};
  claim.msg_iov = &iov;
  claim.iov_count = 1;
  claim.context = &claim_context;
  ASSERT_EQ(fi_trecvmsg(server_.ep, &claim, FI_CLAIM), 0);
  entry = WaitCompletion(server_.rx_cq);
  EXPECT_EQ(entry.op_context, &claim_context);
  EXPECT_STREQ(buf, "first");
  EXPECT_EQ(fi_trecvmsg(server_.ep, &claim, FI_CLAIM), -FI_EINVAL);  // gone
  // Peek and discard the second one.
  msg.tag = 0x20;
  ASSERT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK | FI_DISCARD), 0);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).len, 7u);
  ASSERT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK), 0);
  EXPECT_EQ(WaitError(server_.rx_cq).err, FI_ENOMSG);
  // Bad combinations.
  EXPECT_EQ(fi_trecvmsg(server_.ep, &msg, FI_DISCARD), -FI_EINVAL);
  msg.context = nullptr;
  EXPECT_EQ(fi_trecvmsg(server_.ep, &msg, FI_PEEK | FI_CLAIM), -FI_EINVAL);
}

TEST_F(TcpMsgTest, CancelledReceiveCompletesWithEcanceled) {
  Connect();
  char in[8];
  int context;
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, &context), 0);
  EXPECT_EQ(fi_cancel(&server_.ep->fid, &context), 0);
  fi_cq_err_entry error = WaitError(server_.rx_cq);
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(fi_cancel(&server_.ep->fid, &context), -FI_ENOENT);
}

TEST_F(TcpMsgTest, DeliveryCompleteWaitsForThePeer) {
  Connect();
  iovec iov = {const_cast<char*>("x"), 1};
  int context;
  fi_msg msg = {&iov, nullptr, 1, 0, &context, 0};
  ASSERT_EQ(fi_sendmsg(client_.ep, &msg, FI_DELIVERY_COMPLETE), 0);
  // Not delivered while the server has no receive posted.
  EXPECT_TRUE(StaysEmpty(client_.cq, 100));
  char in[4];
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  WaitCompletion(server_.rx_cq);
  EXPECT_EQ(WaitCompletion(client_.cq).op_context, &context);
}

TEST_F(TcpMsgTest, SelectiveCompletionReportsOnlyWhatIsAskedFor) {
  PairOptions options;
  options.cq_bind_flags = FI_SELECTIVE_COMPLETION;
  Connect(options);
  char in[2][4];
  int want_context;
  iovec recv_iov = {in[1], 4};
  fi_msg recv_msg = {&recv_iov, nullptr, 1, 0, &want_context, 0};
  ASSERT_EQ(fi_recv(server_.ep, in[0], 4, nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_recvmsg(server_.ep, &recv_msg, FI_COMPLETION), 0);
  ASSERT_EQ(fi_send(client_.ep, "a", 2, nullptr, 0, nullptr), 0);
  iovec iov = {const_cast<char*>("b"), 2};
  int context;
  fi_msg msg = {&iov, nullptr, 1, 0, &context, 0};
  ASSERT_EQ(fi_sendmsg(client_.ep, &msg, FI_COMPLETION), 0);
  // One entry each side: the operations posted with FI_COMPLETION.
  EXPECT_EQ(WaitCompletion(client_.cq).op_context, &context);
  EXPECT_EQ(WaitCompletion(server_.rx_cq).op_context, &want_context);
  EXPECT_STREQ(in[0], "a");
  EXPECT_STREQ(in[1], "b");
  EXPECT_TRUE(StaysEmpty(client_.cq, 20));
  EXPECT_TRUE(StaysEmpty(server_.rx_cq, 20));
  // Counters count every operation.
  EXPECT_EQ(fi_cntr_read(client_.tx_cntr), 2u);
  EXPECT_EQ(fi_cntr_read(server_.rx_cntr), 2u);
  uint64_t flags = FI_TRANSMIT | FI_RECV;
  EXPECT_EQ(fi_control(&client_.ep->fid, FI_GETOPSFLAG, &flags), -FI_EINVAL);
}

TEST_F(TcpMsgTest, BadArgumentsAreRefused) {
  Connect();
  char buf[8];
  EXPECT_EQ(fi_send(client_.ep, nullptr, 8, nullptr, 0, nullptr), -FI_EINVAL);
  iovec iov[8];
  for (iovec& piece : iov) piece = {buf, 1};
  EXPECT_EQ(fi_sendv(client_.ep, iov, nullptr, 8, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_recvv(server_.ep, iov, nullptr, 8, 0, nullptr), -FI_EINVAL);
  fi_msg msg = {iov, nullptr, 1, 0, nullptr, 0};
  EXPECT_EQ(fi_sendmsg(client_.ep, &msg, 1ULL << 62), -FI_EBADFLAGS);
  EXPECT_EQ(fi_recvmsg(server_.ep, &msg, FI_PEEK), -FI_EBADFLAGS);  // untagged
  EXPECT_EQ(fi_sendmsg(client_.ep, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0),
            -FI_EOPBADSTATE);
  EXPECT_EQ(fi_accept(client_.ep, nullptr, 0), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_ep_bind(client_.ep, &client_.cq->fid, FI_TRANSMIT),
            -FI_EOPBADSTATE);
  EXPECT_EQ(fi_shutdown(client_.ep, 1), -FI_EBADFLAGS);
}

}  // namespace
}  // namespace fabric

// Connection management of tcp MSG endpoints: names, rejection, refusal,
// shutdown, a peer process that dies mid-transfer, and bad arguments.
#include <arpa/inet.h>
#include <rdma/fi_errno.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fabric/providers/tcp/msg_pair_test.h"

namespace fabric {
namespace {

class TcpCmTest : public MsgPairTest {};

TEST_F(TcpCmTest, NamesOfBothEnds) {
  Connect();
  sockaddr_in local = {}, peer = {}, server_local = {};
  size_t len = sizeof(local);
  ASSERT_EQ(fi_getname(&client_.ep->fid, &local, &len), 0);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  len = sizeof(peer);
  ASSERT_EQ(fi_getpeer(server_.ep, &peer, &len), 0);
  EXPECT_EQ(peer.sin_port, local.sin_port);
  len = sizeof(server_local);
  ASSERT_EQ(fi_getpeer(client_.ep, &server_local, &len), 0);
  EXPECT_EQ(memcmp(&server_local, pep_name_.data(), sizeof(server_local)), 0);
  // A short buffer: -FI_ETOOSMALL with the length needed.
  len = 4;
  EXPECT_EQ(fi_getname(&client_.ep->fid, &local, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(sockaddr_in));
}

// fi_getinfo(3): a passive endpoint in hints->handle is copied to every
// result's handle.
TEST_F(TcpCmTest, GetInfoHandsBackAPassiveEndpointHandle) {
  Listen();
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  hints->handle = &server_.pep->fid;
  fi_info* list = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &list),
            0);
  int results = 0;
  for (fi_info* info = list; info != nullptr; info = info->next, ++results) {
    EXPECT_EQ(info->handle, &server_.pep->fid);
  }
  EXPECT_GT(results, 0);
  fi_freeinfo(list);
  // Once closed, it is no longer handed back.
  ASSERT_EQ(fi_close(&server_.pep->fid), 0);
  server_.pep = nullptr;
  list = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &list),
            0);
  EXPECT_EQ(list->handle, nullptr);
  hints->handle = nullptr;
  fi_freeinfo(hints);
  fi_freeinfo(list);
}

TEST_F(TcpCmTest, RejectCarriesDataToTheClient) {
  Listen();
  OpenClient();
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(), "please", 7), 0);
  std::vector<char> event;
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNREQ);
  fi_eq_cm_entry entry;
  memcpy(&entry, event.data(), sizeof(entry));
  EXPECT_EQ(std::string(event.data() + sizeof(entry)), "please");
  ASSERT_EQ(fi_reject(server_.pep, entry.info->handle, "no room", 8), 0);
  EXPECT_EQ(fi_reject(server_.pep, entry.info->handle, nullptr, 0), -FI_EINVAL);
  fi_freeinfo(entry.info);
  fi_eq_err_entry error = {};
  ASSERT_EQ(WaitEvent(client_.eq, &event, &error), -FI_EAVAIL);
  EXPECT_EQ(error.err, FI_ECONNREFUSED);
  EXPECT_EQ(error.fid, &client_.ep->fid);
  ASSERT_EQ(error.err_data_size, 8u);
  EXPECT_STREQ(static_cast<const char*>(error.err_data), "no room");
}

// fi_domain(3): endpoints with different authorization keys cannot talk.
TEST_F(TcpCmTest, SameAuthKeyConnects) {
  PairOptions options;
  options.server_key = "secret";
  options.client_key = "secret";
  Connect(options);
  char in[4];
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, nullptr), 0);
  ASSERT_EQ(fi_send(client_.ep, "ok", 3, nullptr, 0, nullptr), 0);
  WaitCompletion(server_.rx_cq);
  EXPECT_STREQ(in, "ok");
}

TEST_F(TcpCmTest, DifferentAuthKeysAreRefusedBeforeTheServerSeesThem) {
  PairOptions options;
  options.server_key = "secret";
  options.client_key = "guess";
  Listen(options);
  OpenClient(options);
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0), 0);
  std::vector<char> event;
  fi_eq_err_entry error = {};
  ASSERT_EQ(WaitEvent(client_.eq, &event, &error), -FI_EAVAIL);
  EXPECT_EQ(error.err, FI_ECONNREFUSED);
  uint32_t kind;
  fi_eq_cm_entry entry;
  EXPECT_EQ(fi_eq_read(server_.eq, &kind, &entry, sizeof(entry), 0),
            -FI_EAGAIN);  // no FI_CONNREQ
}

TEST_F(TcpCmTest, NobodyListening) {
  Listen();
  ASSERT_EQ(fi_close(&server_.pep->fid), 0);  // the port is free again
  server_.pep = nullptr;
  OpenClient();
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0), 0);
  std::vector<char> event;
  fi_eq_err_entry error = {};
  ASSERT_EQ(WaitEvent(client_.eq, &event, &error), -FI_EAVAIL);
  EXPECT_EQ(error.err, FI_ECONNREFUSED);
}

TEST_F(TcpCmTest, ShutdownReachesThePeerAndEndsItsOperations) {
  Connect();
  char in[8];
  int context;
  ASSERT_EQ(fi_recv(server_.ep, in, sizeof(in), nullptr, 0, &context), 0);
  ASSERT_EQ(fi_shutdown(client_.ep, 0), 0);
  std::vector<char> event;
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_SHUTDOWN);
  fi_eq_cm_entry entry;
  memcpy(&entry, event.data(), sizeof(entry));
  EXPECT_EQ(entry.fid, &server_.ep->fid);
  fi_cq_err_entry error = WaitError(server_.rx_cq);
  EXPECT_EQ(error.op_context, &context);
  EXPECT_EQ(error.err, FI_ECONNRESET);
  EXPECT_EQ(fi_send(client_.ep, "x", 1, nullptr, 0, nullptr), -FI_ENOTCONN);
  EXPECT_EQ(fi_send(server_.ep, "x", 1, nullptr, 0, nullptr), -FI_ENOTCONN);
  EXPECT_EQ(fi_shutdown(client_.ep, 0), 0);  // again: nothing to do
}

// Under manual progress an application that only waits on its EQ (no CQ
// reads: a server waiting for the client to finish) still learns of the
// peer's shutdown: EQ reads and waits advance the data path of the
// endpoints bound to the EQ, where the connection's end shows.
TEST_F(TcpCmTest, ShutdownReachesAPeerThatOnlyWaitsOnItsEq) {
  Connect();
  ASSERT_EQ(server_.info->domain_attr->data_progress, FI_PROGRESS_MANUAL);
  ASSERT_EQ(fi_shutdown(client_.ep, 0), 0);
  uint32_t event = 0;
  fi_eq_cm_entry entry = {};
  ASSERT_EQ(fi_eq_sread(server_.eq, &event, &entry, sizeof(entry), 5000, 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(event, FI_SHUTDOWN);
  EXPECT_EQ(entry.fid, &server_.ep->fid);
}

// A client process (peer_client) killed while its 256 MiB message is on
// the way: the server's receive ends with an error and the server gets
// FI_SHUTDOWN. The server reuses one 64 MiB buffer four times over.
TEST_F(TcpCmTest, PeerKilledMidTransfer) {
  Listen();
  sockaddr_in address;
  memcpy(&address, pep_name_.data(), sizeof(address));
  std::string port = std::to_string(ntohs(address.sin_port));
  const char* program = "fabric/providers/tcp/peer_client";
  char* argv[] = {const_cast<char*>(program), const_cast<char*>("127.0.0.1"),
                  port.data(), nullptr};
  pid_t child;
  ASSERT_EQ(posix_spawn(&child, program, nullptr, nullptr, argv, environ), 0);
  std::vector<char> event;
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNREQ);
  fi_eq_cm_entry entry;
  memcpy(&entry, event.data(), sizeof(entry));
  OpenSide(&server_, entry.info, {}, false);
  OpenEndpoint(&server_, entry.info, 0);
  std::vector<char> in(64 << 20);
  iovec iov[4];
  for (iovec& piece : iov) piece = {in.data(), in.size()};
  ASSERT_EQ(fi_recvv(server_.ep, iov, nullptr, 4, 0, nullptr), 0);
  ASSERT_EQ(fi_accept(server_.ep, nullptr, 0), 0);
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNECTED);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "peer_client exited " << WEXITSTATUS(status);
  fi_cq_err_entry error = WaitError(server_.rx_cq);
  EXPECT_EQ(error.err, FI_ECONNRESET) << fi_strerror(error.err);
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_SHUTDOWN);
}

TEST_F(TcpCmTest, BadConnectArguments) {
  Listen();
  OpenClient();
  std::string big(257, 'x');
  EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), big.data(), big.size()),
            -FI_EINVAL);
  EXPECT_EQ(fi_connect(client_.ep, nullptr, nullptr, 0), -FI_EINVAL);
  EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 4), -FI_EINVAL);
  EXPECT_EQ(fi_send(client_.ep, "x", 1, nullptr, 0, nullptr), -FI_ENOTCONN);
  EXPECT_EQ(fi_getpeer(client_.ep, nullptr, nullptr), -FI_EINVAL);
  size_t len = 16;
  char name[16];
  EXPECT_EQ(fi_getpeer(client_.ep, name, &len), -FI_ENOTCONN);
  int bogus = 0;
  EXPECT_EQ(fi_reject(server_.pep, reinterpret_cast<fid_t>(&bogus), nullptr, 0),
            -FI_EINVAL);
  // fi_endpoint on something that is not a connection request.
  fi_info* info = fi_dupinfo(client_.info);
  fid conn = {FI_CLASS_CONNREQ, nullptr, nullptr};
  info->handle = &conn;
  fid_ep* ep = nullptr;
  EXPECT_EQ(fi_endpoint(client_.domain, info, &ep, nullptr), -FI_EINVAL);
  info->handle = nullptr;
  fi_freeinfo(info);
  // The passive endpoint refuses a second EQ and endpoint-only calls.
  EXPECT_EQ(fi_pep_bind(server_.pep, &server_.eq->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_connect(reinterpret_cast<fid_ep*>(server_.pep), pep_name_.data(),
                       nullptr, 0),
            -FI_ENOSYS);
}

TEST_F(TcpCmTest, EnableNeedsAnEqAndCqs) {
  Listen();
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  fi_info* info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info),
            0);
  fi_freeinfo(hints);
  OpenSide(&client_, info, {}, true);
  ASSERT_EQ(fi_endpoint(client_.domain, info, &client_.ep, nullptr), 0);
  EXPECT_EQ(fi_enable(client_.ep), -FI_ENOCQ);
  ASSERT_EQ(fi_ep_bind(client_.ep, &client_.cq->fid, FI_TRANSMIT), 0);
  ASSERT_EQ(fi_ep_bind(client_.ep, &client_.rx_cq->fid, FI_RECV), 0);
  EXPECT_EQ(fi_enable(client_.ep), -FI_ENOEQ);
  EXPECT_EQ(fi_ep_bind(client_.ep, &client_.cq->fid, FI_TRANSMIT),
            -FI_EINVAL);  // already bound there
  EXPECT_EQ(fi_ep_bind(client_.ep, &client_.cq->fid, FI_REMOTE_READ),
            -FI_EBADFLAGS);
  EXPECT_EQ(fi_close(&client_.domain->fid), -FI_EBUSY);  // the endpoint
  ASSERT_EQ(fi_ep_bind(client_.ep, &client_.eq->fid, 0), 0);
  EXPECT_EQ(fi_close(&client_.eq->fid), -FI_EBUSY);
  EXPECT_EQ(fi_enable(client_.ep), 0);
  EXPECT_EQ(fi_send(client_.ep, "x", 1, nullptr, 0, nullptr), -FI_ENOTCONN);
}

}  // namespace
}  // namespace fabric

// Every entry point of a udp endpoint refuses bad arguments and calls made
// in the wrong state with the fi_errno libfabric documents, and stays
// usable afterwards.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <string.h>

#include <vector>

#include "fabric/providers/udp/udp_test_fixture.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

class UdpBadInputTest : public UdpLoopbackTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(OpenDomain()); }
};

TEST_F(UdpBadInputTest, FiEndpointChecksItsArguments) {
  fid_ep* ep = nullptr;
  EXPECT_EQ(fi_endpoint(loopback_.domain, nullptr, &ep, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_endpoint(loopback_.domain, loopback_.info, nullptr, nullptr),
            -FI_EINVAL);
  EXPECT_EQ(
      fi_endpoint2(loopback_.domain, loopback_.info, &ep, FI_PEER, nullptr),
      -FI_EINVAL);
  EXPECT_EQ(
      fi_endpoint2(loopback_.domain, loopback_.info, &ep, 1ULL << 3, nullptr),
      -FI_EBADFLAGS);

  auto with = [this](void (*edit)(fi_info*)) {
    fi_info* info = fi_dupinfo(loopback_.info);
    edit(info);
    fid_ep* ep = nullptr;
    int rc = fi_endpoint(loopback_.domain, info, &ep, nullptr);
    fi_freeinfo(info);
    if (ep != nullptr) fi_close(&ep->fid);
    return rc;
  };
  EXPECT_EQ(with([](fi_info* i) { i->ep_attr->type = FI_EP_MSG; }), -FI_EINVAL);
  EXPECT_EQ(with([](fi_info* i) { i->caps |= FI_TAGGED; }), -FI_ENODATA);
  EXPECT_EQ(with([](fi_info* i) { i->addr_format = FI_ADDR_PSMX; }),
            -FI_EINVAL);
  EXPECT_EQ(with([](fi_info* i) { i->tx_attr->iov_limit = 5; }), -FI_EINVAL);
  EXPECT_EQ(with([](fi_info* i) { i->rx_attr->size = 0; }), -FI_EINVAL);
  EXPECT_EQ(with([](fi_info* i) { i->ep_attr->max_msg_size = 65508; }),
            -FI_EINVAL);
  EXPECT_EQ(with([](fi_info* i) {
              static sockaddr_in6 v6 = {};
              v6.sin6_family = AF_INET6;
              free(i->src_addr);
              i->src_addr = malloc(sizeof(v6));
              memcpy(i->src_addr, &v6, sizeof(v6));
              i->src_addrlen = sizeof(v6);  // not FI_SOCKADDR_IN
            }),
            -FI_EINVAL);
  // Still usable afterwards.
  EXPECT_EQ(with([](fi_info*) {}), 0);
}

TEST_F(UdpBadInputTest, NothingMovesBeforeFiEnable) {
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &ep, nullptr), 0);
  char buf[8] = {};
  EXPECT_EQ(fi_send(ep, buf, 1, nullptr, 0, nullptr), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_inject(ep, buf, 1, 0), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_recv(ep, buf, 1, nullptr, 0, nullptr), -FI_EOPBADSTATE);
  EXPECT_EQ(RxSizeLeft(ep), -FI_EOPBADSTATE);
  EXPECT_EQ(TxSizeLeft(ep), -FI_EOPBADSTATE);
  // fi_enable needs CQs (or counters) and an AV.
  EXPECT_EQ(fi_enable(ep), -FI_ENOCQ);
  fi_cq_attr cq_attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(loopback_.domain, &cq_attr, &cq, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep, &cq->fid, 0), -FI_EBADFLAGS);
  EXPECT_EQ(fi_ep_bind(ep, nullptr, FI_TRANSMIT), -FI_EINVAL);
  ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
  EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_RECV), -FI_EINVAL);
  EXPECT_EQ(fi_enable(ep), -FI_ENOAV);
  ASSERT_EQ(fi_ep_bind(ep, &loopback_.av->fid, 0), 0);
  ASSERT_EQ(fi_enable(ep), 0);
  // ...and nothing is reconfigured after it.
  EXPECT_EQ(fi_enable(ep), -FI_EOPBADSTATE);
  EXPECT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT), -FI_EOPBADSTATE);
  char name[64];
  size_t length = sizeof(name);
  ASSERT_EQ(fi_getname(&ep->fid, name, &length), 0);
  EXPECT_EQ(fi_setname(&ep->fid, name, length), -FI_EOPBADSTATE);
  EXPECT_EQ(TxSizeLeft(ep),
            static_cast<ssize_t>(loopback_.info->tx_attr->size));
  EXPECT_EQ(fi_close(&ep->fid), 0);
  EXPECT_EQ(fi_close(&cq->fid), 0);
}

TEST_F(UdpBadInputTest, SendsCheckEveryArgument) {
  TestEndpoint& a = OpenEndpoint();
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  std::vector<char> big(65508);
  char buf[16] = {};
  iovec iov[5] = {{buf, 1}, {buf, 1}, {buf, 1}, {buf, 1}, {buf, 1}};
  EXPECT_EQ(fi_send(a.ep, buf, 1, nullptr, 999, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_send(a.ep, nullptr, 4, nullptr, b.addr, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_send(a.ep, big.data(), big.size(), nullptr, b.addr, nullptr),
            -FI_EMSGSIZE);
  EXPECT_EQ(fi_sendv(a.ep, iov, nullptr, 5, b.addr, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_sendv(a.ep, nullptr, nullptr, 1, b.addr, nullptr), -FI_EINVAL);
  iovec null_base = {nullptr, 3};
  EXPECT_EQ(fi_sendv(a.ep, &null_base, nullptr, 1, b.addr, nullptr),
            -FI_EINVAL);
  // (Descriptors: without FI_MR_HMEM they are not read; app_buffer_test and
  // the conformance suite's GarbageDescriptorsAreNotRead.)

  EXPECT_EQ(fi_sendmsg(a.ep, nullptr, 0), -FI_EINVAL);
  fi_msg msg = {iov, nullptr, 1, b.addr, nullptr, 0};
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, FI_REMOTE_CQ_DATA), -FI_EBADFLAGS);
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, FI_DELIVERY_COMPLETE), -FI_EBADFLAGS);
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, 1ULL << 61), -FI_EBADFLAGS);
  msg.iov_count = 5;
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, 0), -FI_EINVAL);
  msg.iov_count = 1;
  msg.addr = 777;
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, 0), -FI_EINVAL);

  EXPECT_EQ(fi_inject(a.ep, big.data(), big.size(), b.addr), -FI_EMSGSIZE);
  EXPECT_EQ(fi_inject(a.ep, buf, 1, 999), -FI_EINVAL);
  EXPECT_EQ(fi_senddata(a.ep, buf, 1, nullptr, 7, b.addr, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_injectdata(a.ep, buf, 1, 7, b.addr), -FI_ENOSYS);
  // None of these sent anything or wrote a completion.
  EXPECT_TRUE(StaysEmpty(a.cq));
  EXPECT_EQ(fi_send(a.ep, buf, 1, nullptr, b.addr, nullptr), 0);
}

TEST_F(UdpBadInputTest, InjectIsLimitedByInjectSize) {
  fi_info* small = fi_dupinfo(loopback_.info);
  small->tx_attr->inject_size = 8;
  EndpointOptions options;
  options.info = small;
  TestEndpoint& a = OpenEndpoint(options);
  TestEndpoint& b = OpenEndpoint();
  fi_freeinfo(small);
  ASSERT_TRUE(a.ep != nullptr && b.ep != nullptr);
  char buf[9] = {};
  EXPECT_EQ(fi_inject(a.ep, buf, 9, b.addr), -FI_EINVAL);
  iovec iov = {buf, 9};
  fi_msg msg = {&iov, nullptr, 1, b.addr, nullptr, 0};
  EXPECT_EQ(fi_sendmsg(a.ep, &msg, FI_INJECT), -FI_EINVAL);
  EXPECT_EQ(fi_inject(a.ep, buf, 8, b.addr), 0);
  EXPECT_EQ(fi_send(a.ep, buf, 9, nullptr, b.addr, nullptr), 0);
}

TEST_F(UdpBadInputTest, ReceivesCheckEveryArgument) {
  TestEndpoint& b = OpenEndpoint();
  ASSERT_TRUE(b.ep != nullptr);
  char buf[16];
  iovec iov[5] = {{buf, 1}, {buf, 1}, {buf, 1}, {buf, 1}, {buf, 1}};
  EXPECT_EQ(fi_recv(b.ep, nullptr, 4, nullptr, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_recvv(b.ep, iov, nullptr, 5, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_recvv(b.ep, nullptr, nullptr, 2, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_recvmsg(b.ep, nullptr, 0), -FI_EINVAL);
  fi_msg msg = {iov, nullptr, 1, 0, nullptr, 0};
  EXPECT_EQ(fi_recvmsg(b.ep, &msg, FI_MULTI_RECV), -FI_EBADFLAGS);
  EXPECT_EQ(fi_recvmsg(b.ep, &msg, FI_INJECT), -FI_EBADFLAGS);
  EXPECT_EQ(RxSizeLeft(b.ep),
            static_cast<ssize_t>(loopback_.info->rx_attr->size));
}

TEST_F(UdpBadInputTest, NameControlAndOptionCallsCheckArguments) {
  TestEndpoint& a = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr);
  char name[64];
  size_t length = sizeof(name);
  EXPECT_EQ(fi_getname(&a.ep->fid, name, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_getname(&a.ep->fid, nullptr, &length), -FI_EINVAL);
  length = 0;
  EXPECT_EQ(fi_getname(&a.ep->fid, nullptr, &length), -FI_ETOOSMALL);
  EXPECT_EQ(length, sizeof(sockaddr_in));
  length = 4;
  EXPECT_EQ(fi_getname(&a.ep->fid, name, &length), -FI_ETOOSMALL);
  EXPECT_EQ(length, sizeof(sockaddr_in));

  EXPECT_EQ(fi_control(&a.ep->fid, 12345, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_control(&a.ep->fid, FI_GETOPSFLAG, nullptr), -FI_EINVAL);
  uint64_t flags = FI_TRANSMIT | FI_RECV;
  EXPECT_EQ(fi_control(&a.ep->fid, FI_GETOPSFLAG, &flags), -FI_EINVAL);

  size_t value = 0;
  size_t value_length = sizeof(value);
  EXPECT_EQ(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      &value, &value_length),
            0);
  EXPECT_EQ(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                      nullptr, &value_length),
            -FI_EINVAL);
  EXPECT_EQ(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT, 9999, &value, &value_length),
            -FI_ENOPROTOOPT);
  EXPECT_EQ(
      fi_setopt(&a.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &value, 1),
      -FI_EINVAL);
}

TEST_F(UdpBadInputTest, InterfacesUdpLacksSayEnosys) {
  TestEndpoint& a = OpenEndpoint();
  ASSERT_TRUE(a.ep != nullptr);
  char buf[8] = {};
  EXPECT_EQ(fi_write(a.ep, buf, 8, nullptr, a.addr, 0, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_read(a.ep, buf, 8, nullptr, a.addr, 0, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_tsend(a.ep, buf, 8, nullptr, a.addr, 1, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_trecv(a.ep, buf, 8, nullptr, a.addr, 1, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_atomic(a.ep, buf, 1, nullptr, a.addr, 0, 0, FI_UINT64, FI_SUM,
                      nullptr),
            -FI_ENOSYS);
  size_t count = 0;
  EXPECT_EQ(fi_atomicvalid(a.ep, FI_UINT64, FI_SUM, &count), -FI_ENOSYS);
  EXPECT_EQ(fi_barrier(a.ep, 0, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_connect(a.ep, buf, nullptr, 0), -FI_ENOSYS);
  EXPECT_EQ(fi_shutdown(a.ep, 0), -FI_ENOSYS);
  size_t length = sizeof(buf);
  EXPECT_EQ(fi_getpeer(a.ep, buf, &length), -FI_ENOSYS);
  fid_ep* context = nullptr;
  EXPECT_EQ(fi_tx_context(a.ep, 0, nullptr, &context, nullptr), -FI_ENOSYS);
  EXPECT_EQ(fi_rx_context(a.ep, 0, nullptr, &context, nullptr), -FI_ENOSYS);
}

}  // namespace
}  // namespace fabric

// The IP address vector through the C API (tcp on lo, IPv4 sockaddr and
// FI_ADDR_STR domains), and the lookups providers use.
#include "fabric/providers/util/av.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fabric/api/core/status.h"
#include "fabric/fixtures/loopback_domain_test.h"
#include "gtest/gtest.h"

namespace {

using fabric::fixtures::Ipv4;

class AvTest : public fabric::fixtures::LoopbackDomainTest {
 protected:
  void Open(uint32_t addr_format, fi_av_type type = FI_AV_UNSPEC,
            uint64_t flags = 0) {
    ASSERT_NO_FATAL_FAILURE(OpenDomain([addr_format](fi_info* hints) {
      hints->ep_attr->type = FI_EP_RDM;
      hints->addr_format = addr_format;
    }));
    fi_av_attr attr = {};
    attr.type = type;
    attr.flags = flags;
    ASSERT_EQ(fi_av_open(domain_, &attr, &av_, &context_), 0);
  }
  void TearDown() override {
    if (av_ != nullptr) {
      EXPECT_EQ(fi_close(&av_->fid), 0);
    }
    if (eq_ != nullptr) {
      EXPECT_EQ(fi_close(&eq_->fid), 0);
    }
    LoopbackDomainTest::TearDown();
  }
  fabric::UtilAv* Util() { return fabric::AsUtilAv(&av_->fid); }

  fid_av* av_ = nullptr;
  fid_eq* eq_ = nullptr;
  int context_ = 0;
};

TEST_F(AvTest, InsertLookupRemoveSockaddrIn) {
  Open(FI_SOCKADDR_IN, FI_AV_TABLE);
  sockaddr_in peers[3] = {Ipv4("127.0.0.1", 7000), Ipv4("127.0.0.2", 7001),
                          Ipv4("10.1.2.3", 7002)};
  peers[1].sin_zero[0] = 0x5a;  // padding garbage does not matter
  fi_addr_t fi_addr[3];
  ASSERT_EQ(fi_av_insert(av_, peers, 3, fi_addr, 0, nullptr), 3);
  EXPECT_EQ(fi_addr[0], 0u);
  EXPECT_EQ(fi_addr[1], 1u);
  EXPECT_EQ(fi_addr[2], 2u);

  sockaddr_in out;
  size_t len = sizeof(out);
  ASSERT_EQ(fi_av_lookup(av_, 1, &out, &len), 0);
  EXPECT_EQ(len, sizeof(sockaddr_in));
  EXPECT_EQ(out.sin_port, htons(7001));
  EXPECT_EQ(out.sin_addr.s_addr, peers[1].sin_addr.s_addr);
  // A short buffer gets the start, and the size it needed.
  char two[2];
  len = sizeof(two);
  ASSERT_EQ(fi_av_lookup(av_, 0, two, &len), 0);
  EXPECT_EQ(len, sizeof(sockaddr_in));

  absl::StatusOr<fabric::IpAddress> ip = fabric::AvLookupIp(Util(), 2);
  ASSERT_TRUE(ip.ok());
  EXPECT_EQ(ip->HostString(), "10.1.2.3");
  EXPECT_EQ(fabric::AvFindIp(Util(), *ip), 2u);
  sockaddr_in padded = Ipv4("127.0.0.2", 7001);
  auto same = fabric::IpAddress::FromSockaddr(
      reinterpret_cast<sockaddr*>(&padded), sizeof(padded));
  EXPECT_EQ(fabric::AvFindIp(Util(), *same), 1u);

  fi_addr_t gone = 1;
  ASSERT_EQ(fi_av_remove(av_, &gone, 1, 0), 0);
  len = sizeof(out);
  EXPECT_EQ(fi_av_lookup(av_, 1, &out, &len), -FI_EINVAL);
  EXPECT_EQ(fabric::AvFindIp(Util(), *same), FI_ADDR_NOTAVAIL);
  EXPECT_EQ(fi_av_remove(av_, &gone, 1, 0), -FI_EINVAL);
  // Removed indices are not reused.
  fi_addr_t next;
  ASSERT_EQ(fi_av_insert(av_, &peers[1], 1, &next, 0, nullptr), 1);
  EXPECT_EQ(next, 3u);

  char text[64];
  size_t text_len = sizeof(text);
  ASSERT_EQ(fi_av_straddr(av_, &peers[0], text, &text_len), text);
  EXPECT_STREQ(text, "fi_sockaddr_in://127.0.0.1:7000");
  EXPECT_EQ(text_len, strlen(text) + 1);
}

// The transmit paths' cache of the last lookup answers from its copy only
// while no entry has left the AV.
TEST_F(AvTest, LookupCacheFollowsRemovals) {
  Open(FI_SOCKADDR_IN, FI_AV_TABLE);
  sockaddr_in peers[2] = {Ipv4("127.0.0.1", 7000), Ipv4("10.1.2.3", 7002)};
  fi_addr_t fi_addr[2];
  ASSERT_EQ(fi_av_insert(av_, peers, 2, fi_addr, 0, nullptr), 2);
  fabric::AvLookupCache cache;
  absl::StatusOr<const fabric::IpAddress*> first = cache.Lookup(Util(), 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->HostString(), "10.1.2.3");
  absl::StatusOr<const fabric::IpAddress*> again = cache.Lookup(Util(), 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);  // the cached copy
  absl::StatusOr<const fabric::IpAddress*> other = cache.Lookup(Util(), 0);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)->HostString(), "127.0.0.1");

  // Removing another entry also invalidates: the cache knows only that
  // something left.
  fi_addr_t gone = 1;
  ASSERT_EQ(fi_av_remove(av_, &gone, 1, 0), 0);
  EXPECT_FALSE(cache.Lookup(Util(), 1).ok());
  ASSERT_TRUE(cache.Lookup(Util(), 0).ok());
  gone = 0;
  ASSERT_EQ(fi_av_remove(av_, &gone, 1, 0), 0);
  absl::StatusOr<const fabric::IpAddress*> stale = cache.Lookup(Util(), 0);
  EXPECT_FALSE(stale.ok());
  EXPECT_EQ(fabric::ToFiErrno(stale.status()), -FI_EINVAL);
}

TEST_F(AvTest, BadAddressesFailOneByOne) {
  Open(FI_SOCKADDR_IN);
  sockaddr_in peers[2] = {Ipv4("127.0.0.1", 1), Ipv4("127.0.0.1", 2)};
  peers[0].sin_family = AF_INET6;  // does not match FI_SOCKADDR_IN
  fi_addr_t fi_addr[2];
  int errors[2] = {99, 99};
  EXPECT_EQ(fi_av_insert(av_, peers, 2, fi_addr, FI_SYNC_ERR, errors), 1);
  EXPECT_EQ(fi_addr[0], FI_ADDR_NOTAVAIL);
  EXPECT_EQ(errors[0], -FI_EINVAL);
  EXPECT_EQ(errors[1], 0);
  EXPECT_EQ(fi_av_insert(av_, nullptr, 1, fi_addr, 0, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_av_insert(av_, peers, 1, fi_addr, FI_SEND, nullptr),
            -FI_EBADFLAGS);
  EXPECT_EQ(fi_av_insert(av_, peers, 1, fi_addr, FI_SYNC_ERR, nullptr),
            -FI_EINVAL);
}

TEST_F(AvTest, AddrStrAndServicesAndSymmetricRanges) {
  Open(FI_ADDR_STR);
  const char packed[] =
      "fi_sockaddr_in://127.0.0.1:8000\0fi_sockaddr_in6://[::1]:8001";
  fi_addr_t fi_addr[2];
  ASSERT_EQ(fi_av_insert(av_, packed, 2, fi_addr, 0, nullptr), 2);
  char text[64];
  size_t len = sizeof(text);
  ASSERT_EQ(fi_av_lookup(av_, fi_addr[1], text, &len), 0);
  EXPECT_STREQ(text, "fi_sockaddr_in6://[::1]:8001");
  EXPECT_EQ(len, strlen(text) + 1);

  fi_addr_t svc;
  ASSERT_EQ(fi_av_insertsvc(av_, "127.0.0.1", "9000", &svc, 0, nullptr), 1);
  EXPECT_EQ(fabric::AvLookupIp(Util(), svc)->port(), 9000);

  std::vector<fi_addr_t> sym(6);
  ASSERT_EQ(fi_av_insertsym(av_, "10.0.0.254", 3, "5000", 2, sym.data(), 0,
                            nullptr),
            6);
  EXPECT_EQ(fabric::AvLookupIp(Util(), sym[0])->HostString(), "10.0.0.254");
  EXPECT_EQ(fabric::AvLookupIp(Util(), sym[1])->port(), 5001);
  EXPECT_EQ(fabric::AvLookupIp(Util(), sym[4])->HostString(), "10.0.1.0");
  EXPECT_EQ(fi_av_insertsym(av_, "host.invalid", 1, "5000", 1, sym.data(), 0,
                            nullptr),
            -FI_ENODATA);  // not a numeric host
}

TEST_F(AvTest, UserIdsAndAsyncInserts) {
  Open(FI_SOCKADDR_IN, FI_AV_MAP, FI_EVENT);
  sockaddr_in peer = Ipv4("127.0.0.1", 7);
  fi_addr_t fi_addr = 1234;
  // FI_EVENT needs a bound EQ.
  EXPECT_EQ(fi_av_insert(av_, &peer, 1, &fi_addr, 0, nullptr), -FI_ENOEQ);
  fi_eq_attr eq_attr = {};
  ASSERT_EQ(fi_eq_open(fabric_, &eq_attr, &eq_, nullptr), 0);
  ASSERT_EQ(fi_av_bind(av_, &eq_->fid, 0), 0);
  EXPECT_EQ(fi_close(&eq_->fid), -FI_EBUSY);
  int context = 0;
  ASSERT_EQ(fi_av_insert(av_, &peer, 1, &fi_addr, FI_AV_USER_ID, &context),
            0);
  uint32_t event;
  fi_eq_entry entry = {};
  ASSERT_EQ(fi_eq_read(eq_, &event, &entry, sizeof(entry), 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_AV_COMPLETE));
  EXPECT_EQ(entry.fid, &av_->fid);
  EXPECT_EQ(entry.context, &context);
  EXPECT_EQ(entry.data, 1u);
  EXPECT_EQ(fi_addr, 0u);
  fabric::MutexLock<fabric::Mutex> lock(Util()->mutex);
  EXPECT_EQ(Util()->entries[0]->user_id, 1234u);
}

TEST_F(AvTest, UdpDomainsHaveNoSharedAvs) {
  ASSERT_NO_FATAL_FAILURE(OpenDomain([](fi_info* hints) {
    free(hints->fabric_attr->prov_name);
    hints->fabric_attr->prov_name = strdup("udp");
    hints->ep_attr->type = FI_EP_DGRAM;
  }));
  EXPECT_EQ(info_->domain_attr->caps & FI_SHARED_AV, 0u);
  fi_av_attr attr = {};
  attr.name = "udp_shared";
  fid_av* av = nullptr;
  EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_ENOSYS);
  EXPECT_EQ(av, nullptr);
}

TEST_F(AvTest, OpenChecksAttributes) {
  Open(FI_SOCKADDR_IN);
  fi_av_attr attr = {};
  fid_av* av = nullptr;
  EXPECT_EQ(fi_av_open(domain_, nullptr, &av, nullptr), -FI_EINVAL);
  attr.type = static_cast<fi_av_type>(9);
  EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EINVAL);
  attr = {};
  attr.flags = FI_SEND;
  EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_EBADFLAGS);
  attr = {};
  attr.name = "shared";  // the domain was opened without FI_SHARED_AV
  EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_ENOSYS);
  attr = {};
  attr.rx_ctx_bits = 4;
  EXPECT_EQ(fi_av_open(domain_, &attr, &av, nullptr), -FI_ENOSYS);
  EXPECT_EQ(av, nullptr);
  EXPECT_EQ(fi_close(&domain_->fid), -FI_EBUSY);  // av_ is open
}

// A shm name no other test or run uses (sandboxed runs may share pids, and
// a crashed run leaves its objects behind).
}  // namespace

// Av over tcp on lo: insert, lookup, straddr, remove, and errors that keep
// their fi_errno.
#include "fabric/api/cxx/av.h"

#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <type_traits>

#include "fabric/fixtures/cxx_loopback.h"
#include "fabric/fixtures/loopback_domain_test.h"
#include "gtest/gtest.h"

namespace {

static_assert(!std::is_copy_constructible_v<ofi::Av> &&
                  std::is_nothrow_move_constructible_v<ofi::Av>,
              "ofi::Av is move-only");

using fabric::fixtures::Ipv4;

TEST(AvTest, InsertLookupRemove) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  ASSERT_EQ(lo->info->addr_format, FI_SOCKADDR_IN);
  fi_av_attr attr = {};
  attr.type = FI_AV_TABLE;
  absl::StatusOr<ofi::Av> av = ofi::OpenAv(lo->domain, attr);
  ASSERT_TRUE(av.ok()) << av.status();

  sockaddr_in peers[2] = {Ipv4("127.0.0.1", 7471), Ipv4("127.0.0.2", 7472)};
  absl::StatusOr<std::vector<fi_addr_t>> fi_addrs = av->Insert(peers, 2);
  ASSERT_TRUE(fi_addrs.ok()) << fi_addrs.status();
  ASSERT_EQ(fi_addrs->size(), 2u);
  EXPECT_NE((*fi_addrs)[0], (*fi_addrs)[1]);

  absl::StatusOr<std::vector<char>> back = av->Lookup((*fi_addrs)[1]);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), sizeof(sockaddr_in));
  EXPECT_EQ(memcmp(back->data(), &peers[1], sizeof(sockaddr_in)), 0);
  EXPECT_EQ(av->ToString(&peers[0]), "fi_sockaddr_in://127.0.0.1:7471");

  ASSERT_TRUE(av->Remove({(*fi_addrs)[0]}).ok());
  EXPECT_EQ(ofi::FiErrno(av->Lookup((*fi_addrs)[0]).status()), FI_EINVAL);
  EXPECT_EQ(ofi::FiErrno(av->Remove({12345})), FI_EINVAL);
}

TEST(AvTest, RefusedAddressesAndAttributesKeepTheirFiErrno) {
  absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
  ASSERT_TRUE(lo.ok()) << lo.status();
  fi_av_attr attr = {};
  attr.type = static_cast<fi_av_type>(99);
  EXPECT_EQ(ofi::FiErrno(ofi::OpenAv(lo->domain, attr).status()), FI_EINVAL);
  attr.type = FI_AV_MAP;
  absl::StatusOr<ofi::Av> av = ofi::OpenAv(lo->domain, attr);
  ASSERT_TRUE(av.ok()) << av.status();
  sockaddr_in bad = Ipv4("127.0.0.1", 1);
  bad.sin_family = AF_UNIX;
  EXPECT_EQ(ofi::FiErrno(av->Insert(&bad, 1).status()), FI_EINVAL);
  EXPECT_EQ(ofi::FiErrno(av->Insert(nullptr, 1).status()), FI_EINVAL);
}

}  // namespace

// The addresses the verbs RC endpoint hands librdmacm, checked without a
// device.
#include "fabric/providers/verbs/verbs_cm_address.h"

#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/ib.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

int Code(uint32_t format, const void* addr, size_t len) {
  return ToFiErrno(CmAddressOf(format, addr, len).status());
}

TEST(VerbsCmAddressTest, IpAddressesPassInTheirOwnOrTheGenericFormat) {
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  in.sin_port = htons(7471);
  in.sin_addr.s_addr = htonl(0x0a000001);
  for (uint32_t format : {FI_SOCKADDR, FI_SOCKADDR_IN}) {
    absl::StatusOr<CmAddress> address = CmAddressOf(format, &in, sizeof(in));
    ASSERT_TRUE(address.ok()) << address.status();
    EXPECT_EQ(address->length, sizeof(in));
    EXPECT_EQ(address->address()->sa_family, AF_INET);
    EXPECT_EQ(PortOf(*address), 7471);
  }
  sockaddr_in6 in6 = {};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(1);
  absl::StatusOr<CmAddress> address =
      CmAddressOf(FI_SOCKADDR_IN6, &in6, sizeof(in6));
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(PortOf(*address), 1);
}

TEST(VerbsCmAddressTest, InfiniBandAddressesCarryATcpSpaceServiceId) {
  sockaddr_ib ib = {};
  ib.sib_family = AF_IB;
  ib.sib_pkey = htons(0xffff);
  ib.sib_sid = htobe64(RDMA_IB_IP_PS_TCP | 18515);
  ib.sib_sid_mask = htobe64(~uint64_t{0});
  absl::StatusOr<CmAddress> address =
      CmAddressOf(FI_SOCKADDR_IB, &ib, sizeof(ib));
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->address()->sa_family, AF_IB);
  EXPECT_EQ(PortOf(*address), 18515);
  ib.sib_sid = 0;  // librdmacm chooses
  EXPECT_EQ(Code(FI_SOCKADDR_IB, &ib, sizeof(ib)), 0);
  ib.sib_sid = htobe64((uint64_t{RDMA_PS_UDP} << 16) | 1);  // not RC's
  EXPECT_EQ(Code(FI_SOCKADDR_IB, &ib, sizeof(ib)), -FI_EINVAL);
}

TEST(VerbsCmAddressTest, RefusesWhatIsNotTheFormatsAddress) {
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  EXPECT_EQ(Code(FI_SOCKADDR_IN, nullptr, sizeof(in)), -FI_EINVAL);
  EXPECT_EQ(Code(FI_SOCKADDR_IN, &in, 1), -FI_EINVAL);
  EXPECT_EQ(Code(FI_SOCKADDR_IN, &in, sizeof(in) - 1), -FI_EINVAL);
  EXPECT_EQ(Code(FI_SOCKADDR_IN6, &in, sizeof(in)), -FI_EINVAL);
  EXPECT_EQ(Code(FI_SOCKADDR_IB, &in, sizeof(in)), -FI_EINVAL);
  EXPECT_EQ(Code(FI_ADDR_STR, &in, sizeof(in)), -FI_EINVAL);
  sockaddr_in6 in6 = {};
  in6.sin6_family = AF_INET6;
  EXPECT_EQ(Code(FI_SOCKADDR_IN, &in6, sizeof(in6)), -FI_EINVAL);
  sockaddr_storage unknown = {};
  unknown.ss_family = AF_UNIX;
  EXPECT_EQ(Code(FI_SOCKADDR, &unknown, sizeof(unknown)), -FI_EINVAL);
}

TEST(VerbsCmAddressTest, LengthsFollowTheFamily) {
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  sockaddr_in6 in6 = {};
  in6.sin6_family = AF_INET6;
  sockaddr_ib ib = {};
  ib.sib_family = AF_IB;
  sockaddr_storage unknown = {};
  unknown.ss_family = AF_UNIX;
  EXPECT_EQ(CmAddressLength(&in), sizeof(in));
  EXPECT_EQ(CmAddressLength(&in6), sizeof(in6));
  EXPECT_EQ(CmAddressLength(&ib), sizeof(ib));
  EXPECT_EQ(CmAddressLength(&unknown), 0u);
  // An unknown family is refused with its length.
  EXPECT_EQ(ToFiErrno(CmAddressOf(FI_SOCKADDR, &unknown,
                                  CmAddressLength(&unknown))
                          .status()),
            -FI_EINVAL);
}

TEST(VerbsCmAddressTest, ReportsWhatLibrdmacmHolds) {
  sockaddr_in6 in6 = {};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(7471);
  absl::StatusOr<CmAddress> held =
      CmAddressFrom(reinterpret_cast<sockaddr*>(&in6));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->length, sizeof(in6));
  EXPECT_EQ(PortOf(*held), 7471);
  // fi_getname: too small says how much is needed, then the copy.
  sockaddr_in6 out = {};
  size_t len = sizeof(sockaddr_in);
  EXPECT_EQ(CopyCmAddressOut(*held, &out, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(in6));
  EXPECT_EQ(CopyCmAddressOut(*held, &out, &len), 0);
  EXPECT_EQ(memcmp(&out, &in6, sizeof(in6)), 0);
  len = 0;
  EXPECT_EQ(CopyCmAddressOut(*held, nullptr, &len), -FI_ETOOSMALL);
  EXPECT_EQ(len, sizeof(in6));

  // An id not bound yet holds AF_UNSPEC: no address.
  sockaddr_storage none = {};
  held = CmAddressFrom(reinterpret_cast<sockaddr*>(&none));
  ASSERT_FALSE(held.ok());
  EXPECT_EQ(ToFiErrno(held.status()), -FI_EADDRNOTAVAIL);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric

#include "fabric/providers/verbs/verbs_cm_address.h"

#include <endian.h>
#include <infiniband/ib.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace verbs {
namespace {

// The service IDs of RC connections: the TCP port space, a port in the
// low 16 bits.
constexpr uint64_t kServiceSpaceMask = ~uint64_t{0xffff};

absl::Status Invalid(absl::string_view what) {
  return FiError(FI_EINVAL, what);
}

// The family, size and format an address of `family` has.
struct Family {
  sa_family_t family;
  size_t size;
  uint32_t format;
};
constexpr Family kFamilies[] = {
    {AF_INET, sizeof(sockaddr_in), FI_SOCKADDR_IN},
    {AF_INET6, sizeof(sockaddr_in6), FI_SOCKADDR_IN6},
    {AF_IB, sizeof(sockaddr_ib), FI_SOCKADDR_IB},
};

}  // namespace

absl::StatusOr<CmAddress> CmAddressOf(uint32_t format, const void* addr,
                                      size_t len) {
  if (addr == nullptr) return Invalid("no address");
  if (len < sizeof(sa_family_t)) {
    return Invalid(absl::StrCat("an address of ", len, " bytes"));
  }
  sa_family_t family;
  memcpy(&family, addr, sizeof(family));
  const Family* known = nullptr;
  for (const Family& candidate : kFamilies) {
    if (candidate.family == family) known = &candidate;
  }
  if (known == nullptr) {
    return Invalid(absl::StrCat("address family ", family));
  }
  if (format != FI_SOCKADDR && format != known->format) {
    return Invalid(absl::StrCat("an address of family ", family,
                                " in address format ", format));
  }
  if (len != known->size) {
    return Invalid(absl::StrCat("an address of family ", family, " in ", len,
                                " bytes (", known->size, " expected)"));
  }
  CmAddress address;
  memcpy(&address.storage, addr, len);
  address.length = static_cast<socklen_t>(len);
  if (family == AF_IB) {
    const auto* ib = reinterpret_cast<const sockaddr_ib*>(addr);
    uint64_t sid = be64toh(ib->sib_sid);
    if (sid != 0 && (sid & kServiceSpaceMask) != RDMA_IB_IP_PS_TCP) {
      return Invalid(absl::StrCat("InfiniBand service ID 0x", absl::Hex(sid),
                                  " outside the TCP port space"));
    }
  }
  return address;
}

size_t CmAddressLength(const void* addr) {
  sa_family_t family;
  memcpy(&family, addr, sizeof(family));
  for (const Family& known : kFamilies) {
    if (known.family == family) return known.size;
  }
  return 0;
}

absl::StatusOr<CmAddress> CmAddressFrom(const ::sockaddr* address) {
  for (const Family& known : kFamilies) {
    if (address->sa_family != known.family) continue;
    CmAddress out;
    memcpy(&out.storage, address, known.size);
    out.length = static_cast<socklen_t>(known.size);
    return out;
  }
  return FiError(FI_EADDRNOTAVAIL,
                 absl::StrCat("no address (family ", address->sa_family, ")"));
}

int CopyCmAddressOut(const CmAddress& address, void* addr, size_t* addrlen) {
  const size_t room = *addrlen;
  *addrlen = address.length;
  if (room < address.length || addr == nullptr) return -FI_ETOOSMALL;
  memcpy(addr, &address.storage, address.length);
  return 0;
}

uint16_t PortOf(const CmAddress& address) {
  switch (address.storage.ss_family) {
    case AF_INET:
      return ntohs(reinterpret_cast<const sockaddr_in*>(&address.storage)
                       ->sin_port);
    case AF_INET6:
      return ntohs(reinterpret_cast<const sockaddr_in6*>(&address.storage)
                       ->sin6_port);
    case AF_IB:
      return static_cast<uint16_t>(
          be64toh(reinterpret_cast<const sockaddr_ib*>(&address.storage)
                      ->sib_sid) &
          0xffff);
  }
  return 0;
}

}  // namespace verbs
}  // namespace fabric

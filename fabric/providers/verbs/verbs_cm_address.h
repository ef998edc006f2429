// File: fabric/providers/verbs/verbs_cm_address.h
//
// The endpoint addresses an RC endpoint hands librdmacm (rdma_bind_addr,
// rdma_resolve_addr): the application's address in the format its fi_info
// names, checked and copied into a sockaddr of the matching family. Pure,
// tested without a device.
//
//   absl::StatusOr<CmAddress> dest =
//       CmAddressOf(info->addr_format, info->dest_addr, info->dest_addrlen);
//   if (!dest.ok()) return ToFiErrno(dest.status());
//   api.resolve_addr(id, nullptr, dest->address(), timeout_ms);
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_CM_ADDRESS_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_CM_ADDRESS_H_

#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "absl/status/statusor.h"

namespace fabric {
namespace verbs {

struct CmAddress {
  sockaddr_storage storage = {};
  socklen_t length = 0;
  ::sockaddr* address() { return reinterpret_cast<::sockaddr*>(&storage); }
};

// `len` bytes at `addr` in `format` (FI_SOCKADDR: whichever of the others
// the family says; FI_SOCKADDR_IN, FI_SOCKADDR_IN6, FI_SOCKADDR_IB).
// FI_EINVAL (saying why) for a null address, a length other than the
// family's, a family other than the format's, another format, or an
// InfiniBand service ID outside the TCP port space of RC connections
// (RDMA_PS_TCP; 0 lets librdmacm choose).
absl::StatusOr<CmAddress> CmAddressOf(uint32_t format, const void* addr,
                                      size_t len);

// The length of the address at `addr` by its family (fi_connect takes no
// length): that family's sockaddr, or 0 for a family verbs does not take
// (CmAddressOf then says so).
size_t CmAddressLength(const void* addr);

// An address librdmacm reports (a connection id's source or destination),
// with the length of its family. FI_EADDRNOTAVAIL when it has none yet
// (AF_UNSPEC) or one of another family.
absl::StatusOr<CmAddress> CmAddressFrom(const ::sockaddr* address);

// fi_getname / fi_getpeer: copies `address` to `addr` when *addrlen has
// room, and sets *addrlen to its length either way; 0, or -FI_ETOOSMALL.
int CopyCmAddressOut(const CmAddress& address, void* addr, size_t* addrlen);

// The port (IP) or the port part of the service ID (InfiniBand) of
// `address`, in host order: what fi_getname reports a listener bound to.
uint16_t PortOf(const CmAddress& address);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_CM_ADDRESS_H_

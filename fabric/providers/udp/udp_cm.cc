#include "fabric/providers/udp/udp_cm.h"

#include <rdma/fi_errno.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/address.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/udp/udp_endpoint.h"
#include "fabric/providers/udp/udp_socket.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace {

// `status` with the failing call's name in front of its message.
absl::Status In(const char* call, const absl::Status& status) {
  return FiError(-ToFiErrno(status),
                 absl::StrCat(call, ": ", status.message()));
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  if (addrlen == nullptr) {
    return UdpFail(*ep, FI_LOG_EP_CTRL,
                   FiError(FI_EINVAL, "fi_getname: addrlen is NULL"));
  }
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  absl::StatusOr<IpAddress> name = LocalAddress(ep->fd);
  if (!name.ok()) {
    return UdpFail(*ep, FI_LOG_EP_CTRL, In("fi_getname", name.status()));
  }
  // Asking for the length with a short (or no) buffer is ordinary use:
  // -FI_ETOOSMALL without a warning.
  return CopyAddressOut(*name, ep->util.info->addr_format, addr, addrlen);
}

int SetName(fid* object, void* addr, size_t addrlen) {
  UdpEndpoint* ep = ToUdpEndpoint(object);
  MutexLock<OptionalMutex> lock(ep->util.mutex);
  if (ep->util.enabled.load()) {
    return UdpFail(
        *ep, FI_LOG_EP_CTRL,
        FiError(FI_EOPBADSTATE, "fi_setname: the endpoint is already enabled"));
  }
  absl::StatusOr<IpAddress> address =
      IpFromUser(ep->util.info->addr_format, addr, addrlen);
  // A bound socket cannot be bound again: the endpoint takes a new one.
  absl::StatusOr<int> fd = address.ok() ? OpenUdpSocket(*address, ep->tclass)
                                        : absl::StatusOr<int>(address.status());
  if (!fd.ok()) {
    return UdpFail(*ep, FI_LOG_EP_CTRL, In("fi_setname", fd.status()));
  }
  close(ep->fd);
  ep->fd = *fd;
  return 0;
}

}  // namespace

fi_ops_cm kUdpCmOps = ConnectionlessCmOps(SetName, GetName);

}  // namespace fabric

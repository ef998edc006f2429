// File: fabric/providers/tcp/tcp_socket.h
//
// The sockets of tcp endpoints: outgoing connections (non-blocking, no
// Nagle delay, the domain's traffic class), sockets bound to listen on, and
// the connections they accept.
#ifndef FABRIC_PROVIDERS_TCP_TCP_SOCKET_H_
#define FABRIC_PROVIDERS_TCP_TCP_SOCKET_H_

#include <rdma/providers/fi_prov.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"

namespace fabric {
namespace tcp {

// A non-blocking socket whose connect(2) to `peer` has started (from
// `local` when given); the fd, or the failing call's error.
absl::StatusOr<int> StartConnect(const IpAddress& peer,
                                 const std::optional<IpAddress>& local,
                                 uint32_t tclass);

// Waits up to `timeout_ms` for a connect started by StartConnect to finish:
// OK, or the connection's error (FI_ECONNREFUSED, FI_ETIMEDOUT, ...).
absl::Status FinishConnect(int fd, int timeout_ms);

// A non-blocking socket bound to `address` (port 0: an ephemeral port),
// SO_REUSEADDR set, not yet listening.
absl::StatusOr<int> BoundSocket(const IpAddress& address);

// The next connection waiting on the listening `listen_fd` (non-blocking,
// no Nagle delay), or -1: none waits, or the process is out of fds and the
// connection was refused (RefuseConnection, tcp_fd_limit.h).
int AcceptSocket(int listen_fd, const fi_provider* log);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_SOCKET_H_

// File: fabric/providers/tcp/tcp_fd_limit.h
//
// The process's file descriptors: every tcp connection holds one, so an
// RDM endpoint with 1,000 peers needs more than the usual default soft
// RLIMIT_NOFILE of 1024. The first tcp endpoint of a process raises the
// soft limit to the hard limit and sets one fd aside. Past the limit a
// connect fails with -FI_EMFILE; a listener that cannot accept takes the
// waiting connection with the spare fd and closes it (the peer sees the
// connection reset) rather than staying readable, and so busy, forever.
#ifndef FABRIC_PROVIDERS_TCP_TCP_FD_LIMIT_H_
#define FABRIC_PROVIDERS_TCP_TCP_FD_LIMIT_H_

#include <rdma/providers/fi_prov.h>

#include <string>

namespace fabric {
namespace tcp {

// Raises the soft RLIMIT_NOFILE and opens the spare fd, once per process;
// logs what it did (info level; a failure at warning level).
void PrepareFdBudget(const fi_provider* log);

// Whether a call failed for want of file descriptors (EMFILE, ENFILE).
bool IsOutOfFds(int err);

// "soft RLIMIT_NOFILE N": for error messages.
std::string FdLimitText();

// accept(2) on `listen_fd` failed with IsOutOfFds: closes the oldest waiting
// connection through the spare fd. Logs a warning.
void RefuseConnection(int listen_fd, const fi_provider* log);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_FD_LIMIT_H_

// File: fabric/providers/tcp/loopback_testing.h
//
// What the tcp tests share: fi_getinfo for the tcp provider on 127.0.0.1
// (FI_SOCKADDR_IN, FI_SOURCE, any port), then its fabric and domain.
#ifndef FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_
#define FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <functional>

namespace fabric {
namespace tcp {

struct LoopbackDomain {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
};

// Fills `out` for endpoint `type` with `caps`; `adjust` edits the other
// hints first. 0 or the first failing call's negative fi_errno (what is
// open stays in `out` for CloseLoopbackDomain).
int OpenLoopbackDomain(fi_ep_type type, uint64_t caps,
                       const std::function<void(fi_info*)>& adjust,
                       LoopbackDomain* out);
// The same on `node` ("::1", say) instead of 127.0.0.1.
int OpenLoopbackDomainAt(const char* node, fi_ep_type type, uint64_t caps,
                         const std::function<void(fi_info*)>& adjust,
                         LoopbackDomain* out);

// An `adjust` for OpenLoopbackDomain: the shm provider, with `progress`.
void UseShm(fi_info* hints, fi_progress progress);

// Opens an endpoint of `domain` for `info`, bound to `av` and, for both
// directions, to `cq`, and enables it; 0 or the first failing call's result.
int OpenBoundEndpoint(fid_domain* domain, fi_info* info, fid_av* av,
                      fid_cq* cq, fid_ep** ep);

// Opens an FI_AV_TABLE AV on `domain`; fi_av_open's result.
int OpenTableAv(fid_domain* domain, fid_av** av);

// Closes the domain and fabric (their children must be closed) and frees
// the info; 0 or the first failing fi_close's result.
int CloseLoopbackDomain(LoopbackDomain* domain);

// A peer process's one RDM endpoint and what it stands on: one CQ for both
// directions.
struct RdmEndpoint {
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
};

// Opens all of `out` for `info` (CQ entries of `format`) and enables the
// endpoint; 0 or the first failing call's result.
int OpenRdmEndpoint(fi_info* info, fi_cq_format format, RdmEndpoint* out);
// Closes what OpenRdmEndpoint opened, the endpoint first.
void CloseRdmEndpoint(RdmEndpoint* endpoint);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_

// File: fabric/providers/tcp/loopback_testing.h
//
// What the tcp tests share: fi_getinfo for the tcp provider on 127.0.0.1
// (FI_SOCKADDR_IN, FI_SOURCE, any port), then its fabric and domain.
#ifndef FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_
#define FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <functional>
#include <string>

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

// An shm RDM loopback domain (FI_MSG, manual progress) with an AV and a
// CQ of FI_CQ_FORMAT_MSG entries (`cq_size`, 0: the default): 0 or the
// first failing call's result (what is open stays in the out parameters).
int OpenShmLoopback(size_t cq_size, LoopbackDomain* loopback, fid_av** av,
                    fid_cq** cq);

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

// How test programs pass endpoint names on a command line or a pipe: the
// `len` bytes at `data` as lowercase hex, and back (false unless `text`
// starts with 2 * `len` hex digits).
std::string ToHex(const void* data, size_t len);
bool FromHex(const char* text, void* out, size_t len);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_LOOPBACK_TESTING_H_

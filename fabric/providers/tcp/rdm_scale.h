// File: fabric/providers/tcp/rdm_scale.h
//
// What the RDM scale test's hub and its peer processes (rdm_scale_peers)
// share: the message each peer sends and the answer it gets, and the tcp
// RDM setup on 127.0.0.1 (manual progress, one AV and one CQ for every
// endpoint of a process).
#ifndef FABRIC_PROVIDERS_TCP_RDM_SCALE_H_
#define FABRIC_PROVIDERS_TCP_RDM_SCALE_H_

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <functional>
#include <string>

#include "fabric/fixtures/loopback.h"

namespace fabric {
namespace tcp {

// A peer's message to the hub (answer == 0) or the hub's answer (1).
struct ScaleMessage {
  uint32_t index;  // the peer's, 0..peers-1
  uint32_t answer;
  uint8_t payload[48];
  uint32_t checksum;  // of everything before it
};

ScaleMessage MakeScaleMessage(uint32_t index, uint32_t answer);
// Whether `message` is exactly MakeScaleMessage(index, answer), checksum
// included.
bool IsScaleMessage(const ScaleMessage& message, uint32_t index,
                     uint32_t answer);

// Fabric, domain, AV and CQ of one process. Calls return 0 or -fi_errno and
// print what failed to stderr.
class ScaleDomain {
 public:
  ScaleDomain() = default;
  ScaleDomain(const ScaleDomain&) = delete;
  ScaleDomain& operator=(const ScaleDomain&) = delete;

  // `wait`: the CQ's wait object.
  int Open(fi_wait_obj wait = FI_WAIT_NONE);
  // An enabled endpoint bound to the AV and, for both directions, the CQ;
  // its address in `name`.
  int OpenEndpoint(fid_ep** ep, sockaddr_in* name);
  // Closes what Open opened (endpoints first: the caller's).
  int Close();

  fid_av* av() const { return av_; }
  fid_cq* cq() const { return cq_; }

 private:
  fixtures::Objects loopback_;  // info, fabric and domain
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
};

// Calls `post` until it returns other than -FI_EAGAIN, calling `progress`
// between tries (the CQ is full, or the other branch's connect is under
// way). Stops with -FI_ETIMEDOUT after `timeout_ms`, or with `progress`'s
// error when it returns non-zero.
int PostWithRetry(const std::function<ssize_t()>& post,
                  const std::function<int()>& progress, int timeout_ms);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_RDM_SCALE_H_

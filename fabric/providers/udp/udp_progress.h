// File: fabric/providers/udp/udp_progress.h
//
// How a udp endpoint takes datagrams off its socket: the fabric's progress
// engine calls Progress() (inside the application's CQ and counter reads,
// and from its own thread with FI_PROGRESS_AUTO). Each datagram fills the
// oldest posted receive; one that finds no receive posted is discarded, as
// an unreliable datagram endpoint may do.
#ifndef FABRIC_PROVIDERS_UDP_UDP_PROGRESS_H_
#define FABRIC_PROVIDERS_UDP_UDP_PROGRESS_H_

#include "fabric/providers/util/progress.h"

namespace fabric {

struct UdpEndpoint;

// The endpoint's ProgressSource. It is a member of UdpEndpoint, not its
// base: the endpoint starts with its fid_ep, which a class with virtual
// functions cannot.
class UdpProgress : public ProgressSource {
 public:
  explicit UdpProgress(UdpEndpoint* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  // A UDP socket's non-blocking read costs what epoll_wait costs.
  bool poll_directly() const override { return true; }

 private:
  UdpEndpoint* const ep_;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_PROGRESS_H_

// File: fabric/providers/udp/udp_endpoint.h
//
// The udp provider's FI_EP_DGRAM endpoint (fi_endpoint(3)): one nonblocking
// UDP socket bound to info->src_addr (port 0: an ephemeral port; the
// address family picks IPv4 or IPv6), the objects bound to it (UtilEndpoint)
// and the receives posted on it.
//
// Sends hand the datagram to the kernel inside the call, straight from the
// application's host memory (device memory, or any buffer once an HMEM
// override is installed, goes through a bounce buffer); they complete at
// once, and a full socket buffer is -FI_EAGAIN. Receives wait in order of
// posting for UdpProgress to fill them (udp_progress.h). fi_endpoint's
// other tables:
// fi_ops_msg in udp_msg.h, fi_ops_cm in udp_cm.h; RMA, tagged, atomic and
// collective operations return -FI_ENOSYS.
#ifndef FABRIC_PROVIDERS_UDP_UDP_ENDPOINT_H_
#define FABRIC_PROVIDERS_UDP_UDP_ENDPOINT_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/providers/fi_log.h>
#include <sys/socket.h>

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "fabric/providers/udp/udp_progress.h"
#include "fabric/providers/util/app_buffer.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/ring_queue.h"

namespace fabric {

// A receive waiting for a datagram.
struct UdpReceive {
  AppBuffer buffer;
  size_t capacity;  // the buffer's length
  void* context;
  uint64_t flags;  // fi_recvmsg's flags, or the endpoint's rx op flags
  bool reserved;   // holds a slot of the receive CQ (CqReserve)
};

struct UdpEndpoint {
  UdpEndpoint() : progress(this) {}

  UtilEndpoint util;  // first: the application's fid_ep* is util.ep_fid
  UdpProgress progress;
  int fd = -1;
  uint32_t tclass = FI_TC_UNSPEC;  // of every socket the endpoint opens
  bool report_source = false;      // FI_SOURCE: completions carry the sender
  RingQueue<UdpReceive> receives ABSL_GUARDED_BY(util.mutex);
  // Of the last send.
  AvLookupCache destination ABSL_GUARDED_BY(util.mutex);
  // One outgoing datagram, and one incoming.
  std::vector<char> send_bounce ABSL_GUARDED_BY(util.mutex);
  std::vector<char> receive_bounce ABSL_GUARDED_BY(util.mutex);
};
FABRIC_BEGINS_WITH(UdpEndpoint, util);

inline UdpEndpoint* ToUdpEndpoint(fid* object) {
  return FidCast<UdpEndpoint>(object);
}
inline UdpEndpoint* ToUdpEndpoint(fid_ep* ep) {
  return ToUdpEndpoint(&ep->fid);
}

inline const fi_provider* UdpLog(const UdpEndpoint& ep) {
  return ep.util.domain->fabric->provider->c_provider();
}

// Points message->msg_iov (room for kUdpIovLimit pieces) at `buffer`'s own
// memory when the kernel may read and write it directly
// (DirectlyAccessible); false, with nothing set, when it has to go through
// a bounce buffer.
bool UseDirectly(const UdpEndpoint& ep, const AppBuffer& buffer,
                 msghdr* message);

// Logs `status` (a warning; FI_EAGAIN, which only asks the application to
// retry, at debug level) and returns its negative fi_errno.
int UdpFail(const UdpEndpoint& ep, fi_log_subsys subsys,
            const absl::Status& status);

// fi_endpoint / fi_endpoint2 on a udp domain (flags already checked: 0).
int OpenUdpEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                    void* context);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_ENDPOINT_H_

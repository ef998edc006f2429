#include "fabric/providers/udp/udp_progress.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "fabric/api/core/address.h"
#include "fabric/providers/udp/udp_endpoint.h"
#include "fabric/providers/util/av.h"

namespace fabric {
namespace {

// Datagrams one Progress() call takes at most, so that a flooded endpoint
// does not hold the engine from the others. The application's passes call
// Progress() every time (the socket is polled directly while the engine has
// few sources, else whenever epoll finds it readable), so one datagram per
// call does, and no read is spent finding the socket empty after it; the
// auto-progress thread, woken by new data only, drains.
constexpr int kDatagramsPerProgress = 64;

fi_addr_t SourceOf(UdpEndpoint& ep, const sockaddr_storage& from,
                   socklen_t from_length) {
  if (!ep.report_source) return FI_ADDR_NOTAVAIL;
  absl::StatusOr<IpAddress> address = IpAddress::FromSockaddr(
      reinterpret_cast<const sockaddr*>(&from), from_length);
  return address.ok() ? AvFindIp(ep.util.av, *address) : FI_ADDR_NOTAVAIL;
}

// Completes the oldest posted receive with the `length`-byte datagram in
// ep.receive_bounce; the lock is held.
void Deliver(UdpEndpoint& ep, size_t length, const sockaddr_storage& from,
             socklen_t from_length) {
  UdpReceive receive = std::move(ep.receives.front());
  ep.receives.pop_front();
  fi_cq_tagged_entry entry = {};
  entry.op_context = receive.context;
  entry.flags = FI_RECV | FI_MSG;
  entry.len = std::min({length, receive.capacity, ep.receive_bounce.size()});
  ssize_t copied = ScatterAppBuffer(ep.util.domain->copier, receive.buffer,
                                    ep.receive_bounce.data(), entry.len);
  if (copied < 0) {
    FI_WARN(UdpLog(ep), FI_LOG_EP_DATA,
            "copying a datagram to the application's buffer failed: %s\n",
            fi_strerror(static_cast<int>(-copied)));
    entry.len = 0;
    ReportError(&ep.util, ep.util.rx_cq, receive.reserved, entry,
                static_cast<int>(-copied), 0, kRecvCntr);
    return;
  }
  if (length > entry.len) {
    ReportError(&ep.util, ep.util.rx_cq, receive.reserved, entry, FI_ETRUNC,
                length - entry.len, kRecvCntr);
    return;
  }
  ReportSuccess(&ep.util, ep.util.rx_cq, WantsRxEntry(ep.util, receive.flags),
                receive.reserved, entry, SourceOf(ep, from, from_length),
                kRecvCntr);
}

}  // namespace

void UdpProgress::Progress() {
  UdpEndpoint& ep = *ep_;
  std::lock_guard<OptionalMutex> lock(ep.util.mutex);
  const int most = ProgressEngine::InAutoThread() ? kDatagramsPerProgress : 1;
  for (int taken = 0; taken < most;) {
    bool posted = !ep.receives.empty();
    sockaddr_storage from;
    socklen_t from_length = sizeof(from);
    // MSG_TRUNC: the datagram's full length even when the buffer is
    // shorter; with no receive posted, a zero-length read discards it.
    ssize_t length = recvfrom(ep.fd, ep.receive_bounce.data(),
                              posted ? ep.receive_bounce.size() : 0,
                              MSG_DONTWAIT | MSG_TRUNC,
                              reinterpret_cast<sockaddr*>(&from), &from_length);
    if (length < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        FI_WARN(UdpLog(ep), FI_LOG_EP_DATA, "recvfrom: %s\n", strerror(errno));
      }
      return;
    }
    ++taken;
    if (!posted) {
      FI_INFO(UdpLog(ep), FI_LOG_EP_DATA,
              "dropped a %zd-byte datagram: no receive is posted\n", length);
      continue;
    }
    Deliver(ep, static_cast<size_t>(length), from, from_length);
  }
}

int UdpProgress::progress_fd() const { return ep_->fd; }

bool UdpProgress::auto_progress() const {
  return ep_->util.domain->info->domain_attr->data_progress == FI_PROGRESS_AUTO;
}

}  // namespace fabric

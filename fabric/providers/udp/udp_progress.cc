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
#include "fabric/providers/udp/udp_limits.h"
#include "fabric/providers/util/app_buffer.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/syscalls.h"

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

// Completes the oldest posted receive with the `length`-byte datagram,
// which is in its buffer already (`placed`) or in ep.receive_bounce.
void Deliver(UdpEndpoint& ep, size_t length, bool placed,
             const sockaddr_storage& from, socklen_t from_length)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep.util.mutex) {
  UdpReceive receive = std::move(ep.receives.front());
  ep.receives.pop_front();
  fi_cq_tagged_entry entry = {};
  entry.op_context = receive.context;
  entry.flags = FI_RECV | FI_MSG;
  entry.len = std::min({length, receive.capacity, ep.receive_bounce.size()});
  ssize_t copied =
      placed ? 0
             : ScatterAppBuffer(ep.util.domain->copier, receive.buffer,
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
  MutexLock<OptionalMutex> lock(ep.util.mutex);
  const int most = ProgressEngine::InAutoThread() ? kDatagramsPerProgress : 1;
  for (int taken = 0; taken < most;) {
    bool posted = !ep.receives.empty();
    // The datagram goes straight into the oldest receive's buffer when the
    // kernel may write it, else into the bounce buffer; with no receive
    // posted, a zero-length read discards it.
    bool placed = false;
    iovec pieces[kUdpIovLimit];
    msghdr message = {};
    message.msg_iov = pieces;
    if (posted) {
      placed = UseDirectly(ep, ep.receives.front().buffer, &message);
      if (!placed) {
        pieces[0] = {ep.receive_bounce.data(), ep.receive_bounce.size()};
        message.msg_iovlen = 1;
      }
    }
    sockaddr_storage from;
    // The sender's address only when completions report it (FI_SOURCE).
    if (ep.report_source) {
      message.msg_name = &from;
      message.msg_namelen = sizeof(from);
    }
    // MSG_TRUNC: the datagram's full length even when the buffer is
    // shorter.
    ssize_t length = RecvMsg(ep.fd, &message, MSG_DONTWAIT | MSG_TRUNC);
    if (length < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        FI_WARN(UdpLog(ep), FI_LOG_EP_DATA, "receiving: %s\n",
                strerror(errno));
      }
      return;
    }
    ++taken;
    if (!posted) {
      FI_INFO(UdpLog(ep), FI_LOG_EP_DATA,
              "dropped a %zd-byte datagram: no receive is posted\n", length);
      continue;
    }
    Deliver(ep, static_cast<size_t>(length), placed, from,
            message.msg_namelen);
  }
}

int UdpProgress::progress_fd() const { return ep_->fd; }

bool UdpProgress::auto_progress() const {
  return ep_->util.domain->info->domain_attr->data_progress == FI_PROGRESS_AUTO;
}

}  // namespace fabric

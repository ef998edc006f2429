#include "fabric/providers/udp/udp_msg.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/address.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/udp/udp_endpoint.h"
#include "fabric/providers/udp/udp_limits.h"
#include "fabric/providers/util/app_buffer.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/data_path_ops.h"
#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace {

constexpr uint64_t kSendMsgFlags = FI_COMPLETION | FI_INJECT |
                                   FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
                                   FI_MORE;
constexpr uint64_t kRecvMsgFlags = FI_COMPLETION | FI_MORE;

absl::Status CallError(const char* call, int fi_errno, absl::string_view what) {
  return FiError(fi_errno, absl::StrCat(call, ": ", what));
}

// The flags of fi_sendmsg / fi_recvmsg: the caller's, checked (the other
// calls carry the endpoint's op_flags, not checked here).
absl::Status CheckCall(const char* call, bool msg_call, uint64_t flags,
                       uint64_t known_flags) {
  if (!msg_call || (flags & ~known_flags) == 0) return absl::OkStatus();
  return CallError(
      call, FI_EBADFLAGS,
      absl::StrCat("unsupported flags 0x", absl::Hex(flags & ~known_flags)));
}

// Describes the request's buffer into *buffer: its length.
absl::StatusOr<size_t> Describe(const UdpEndpoint& ep, const char* call,
                                const iovec* iov, void** desc, size_t count,
                                size_t iov_limit, AppBuffer* buffer) {
  if (!ep.util.enabled.load()) {
    return CallError(call, FI_EOPBADSTATE, "the endpoint is not enabled");
  }
  if (count > iov_limit) {
    return CallError(
        call, FI_EINVAL,
        absl::StrCat("iov_count ", count, " exceeds iov_limit ", iov_limit));
  }
  absl::StatusOr<size_t> length =
      DescribeAppBuffer(*ep.util.domain, iov, desc, count, buffer);
  if (!length.ok()) {
    return CallError(call, FI_EINVAL, length.status().message());
  }
  return length;
}

// Sends the message, from the application's buffer when the kernel may
// read it, else through the bounce buffer.
absl::Status Transmit(UdpEndpoint& ep, const char* call,
                      const AppBuffer& buffer, size_t length,
                      const IpAddress& dest)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep.util.mutex) {
  iovec pieces[kUdpIovLimit];
  msghdr message = {};
  message.msg_name = const_cast<sockaddr*>(dest.sockaddr_ptr());
  message.msg_namelen = dest.length();
  message.msg_iov = pieces;
  if (!UseDirectly(ep, buffer, &message)) {
    ssize_t copied = GatherAppBuffer(ep.util.domain->copier, buffer,
                                     ep.send_bounce.data(), length);
    if (copied < 0) {
      return CallError(call, static_cast<int>(-copied),
                       "copying from the application's buffer failed");
    }
    pieces[0] = {ep.send_bounce.data(), length};
    message.msg_iovlen = 1;
  }
  ssize_t sent;
  do {
    sent = SendMsg(ep.fd, &message, 0);
  } while (sent < 0 && errno == EINTR);
  if (sent >= 0) return absl::OkStatus();
  int err = errno;
  if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
    return CallError(call, FI_EAGAIN, "the socket's send buffer is full");
  }
  return CallError(
      call, err,
      absl::StrCat("sending to ", FormatAddrStr(dest), ": ", strerror(err)));
}

absl::Status PostSend(UdpEndpoint& ep, const TransmitCall& request) {
  const fi_info& info = *ep.util.info;
  AppBuffer buffer;
  absl::StatusOr<size_t> described =
      Describe(ep, request.name, request.iov, request.desc, request.count,
               info.tx_attr->iov_limit, &buffer);
  if (!described.ok()) return described.status();
  size_t length = *described;
  if (length > info.ep_attr->max_msg_size) {
    return CallError(
        request.name, FI_EMSGSIZE,
        absl::StrCat("a ", length, "-byte message exceeds max_msg_size ",
                     info.ep_attr->max_msg_size));
  }
  if ((request.inject_call || (request.flags & FI_INJECT)) &&
      length > info.tx_attr->inject_size) {
    return CallError(
        request.name, FI_EINVAL,
        absl::StrCat("a ", length, "-byte message exceeds inject_size ",
                     info.tx_attr->inject_size));
  }
  MutexLock<OptionalMutex> lock(ep.util.mutex);
  absl::StatusOr<const IpAddress*> dest =
      ep.destination.Lookup(ep.util.av, request.dest);
  if (!dest.ok()) {
    return CallError(request.name, FI_EINVAL, dest.status().message());
  }
  UtilCq* cq = ep.util.tx_cq;
  bool reserved = !request.inject_call && cq != nullptr;
  if (reserved && CqReserve(cq) != 0) {
    return CallError(request.name, FI_EAGAIN, "the transmit CQ is full");
  }
  absl::Status sent = Transmit(ep, request.name, buffer, length, **dest);
  if (!sent.ok()) {
    if (reserved) CqUnreserve(cq);
    return sent;
  }
  fi_cq_tagged_entry entry = {};
  entry.op_context = request.context;
  entry.flags = FI_SEND | FI_MSG;
  bool write_entry =
      !request.inject_call && WantsTxEntry(ep.util, request.flags);
  ReportSuccess(&ep.util, cq, write_entry, reserved, entry, FI_ADDR_NOTAVAIL,
                kSendCntr);
  return absl::OkStatus();
}

absl::Status PostRecv(UdpEndpoint& ep, const ReceiveCall& request) {
  const fi_info& info = *ep.util.info;
  AppBuffer buffer;
  absl::StatusOr<size_t> capacity =
      Describe(ep, request.name, request.iov, request.desc, request.count,
               info.rx_attr->iov_limit, &buffer);
  if (!capacity.ok()) return capacity.status();

  MutexLock<OptionalMutex> lock(ep.util.mutex);
  if (ep.receives.size() >= info.rx_attr->size) {
    return CallError(request.name, FI_EAGAIN,
                     absl::StrCat("rx_attr->size (", info.rx_attr->size,
                                  ") receives are already posted"));
  }
  UtilCq* cq = ep.util.rx_cq;
  bool reserved = cq != nullptr;
  if (reserved && CqReserve(cq) != 0) {
    return CallError(request.name, FI_EAGAIN, "the receive CQ is full");
  }
  ep.receives.push_back(UdpReceive{std::move(buffer), *capacity,
                                   request.context, request.flags, reserved});
  return absl::OkStatus();
}

// The C entry points of fi_msg (util/data_path_ops.h) end here.
struct UdpCalls {
  static ssize_t Transmit(fid_ep* ep_fid, const TransmitCall& call) {
    UdpEndpoint& ep = *ToUdpEndpoint(ep_fid);
    absl::Status status =
        CheckCall(call.name, call.msg_call, call.flags, kSendMsgFlags);
    if (status.ok() && call.data_call) {
      status = CallError(call.name, FI_ENOSYS,
                         "udp carries no remote CQ data (cq_data_size 0)");
    }
    if (status.ok()) status = PostSend(ep, call);
    return status.ok() ? 0 : UdpFail(ep, FI_LOG_EP_DATA, status);
  }
  // Without FI_DIRECTED_RECV the source address of a receive is ignored.
  static ssize_t Receive(fid_ep* ep_fid, const ReceiveCall& call) {
    UdpEndpoint& ep = *ToUdpEndpoint(ep_fid);
    absl::Status status =
        CheckCall(call.name, call.msg_call, call.flags, kRecvMsgFlags);
    if (status.ok()) status = PostRecv(ep, call);
    return status.ok() ? 0 : UdpFail(ep, FI_LOG_EP_DATA, status);
  }
  static uint64_t TxFlags(fid_ep* ep) {
    return ToUdpEndpoint(ep)->util.tx_op_flags;
  }
  static uint64_t RxFlags(fid_ep* ep) {
    return ToUdpEndpoint(ep)->util.rx_op_flags;
  }
  static const fi_provider* Log(fid_ep* ep) {
    return UdpLog(*ToUdpEndpoint(ep));
  }
};

}  // namespace

fi_ops_msg kUdpMsgOps = MsgOps<UdpCalls>();

}  // namespace fabric

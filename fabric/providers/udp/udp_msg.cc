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
#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace {

constexpr uint64_t kSendMsgFlags = FI_COMPLETION | FI_INJECT |
                                   FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE |
                                   FI_MORE;
constexpr uint64_t kRecvMsgFlags = FI_COMPLETION | FI_MORE;

struct SendRequest {
  const char* call;  // for the log
  const iovec* iov;
  void** desc;
  size_t count;
  fi_addr_t dest;
  void* context;
  uint64_t flags;
  bool inject;  // fi_inject: no completion entry
};

struct RecvRequest {
  const char* call;
  const iovec* iov;
  void** desc;
  size_t count;
  void* context;
  uint64_t flags;
};

absl::Status CallError(const char* call, int fi_errno, absl::string_view what) {
  return FiError(fi_errno, absl::StrCat(call, ": ", what));
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
// read it, else through the bounce buffer; the lock is held.
absl::Status Transmit(UdpEndpoint& ep, const char* call,
                      const AppBuffer& buffer, size_t length,
                      const IpAddress& dest) {
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

absl::Status PostSend(UdpEndpoint& ep, const SendRequest& request) {
  const fi_info& info = *ep.util.info;
  AppBuffer buffer;
  absl::StatusOr<size_t> described =
      Describe(ep, request.call, request.iov, request.desc, request.count,
               info.tx_attr->iov_limit, &buffer);
  if (!described.ok()) return described.status();
  size_t length = *described;
  if (length > info.ep_attr->max_msg_size) {
    return CallError(
        request.call, FI_EMSGSIZE,
        absl::StrCat("a ", length, "-byte message exceeds max_msg_size ",
                     info.ep_attr->max_msg_size));
  }
  if ((request.inject || (request.flags & FI_INJECT)) &&
      length > info.tx_attr->inject_size) {
    return CallError(
        request.call, FI_EINVAL,
        absl::StrCat("a ", length, "-byte message exceeds inject_size ",
                     info.tx_attr->inject_size));
  }
  std::lock_guard<OptionalMutex> lock(ep.util.mutex);
  absl::StatusOr<const IpAddress*> dest =
      ep.destination.Lookup(ep.util.av, request.dest);
  if (!dest.ok()) {
    return CallError(request.call, FI_EINVAL, dest.status().message());
  }
  UtilCq* cq = ep.util.tx_cq;
  bool reserved = !request.inject && cq != nullptr;
  if (reserved && CqReserve(cq) != 0) {
    return CallError(request.call, FI_EAGAIN, "the transmit CQ is full");
  }
  absl::Status sent = Transmit(ep, request.call, buffer, length, **dest);
  if (!sent.ok()) {
    if (reserved) CqUnreserve(cq);
    return sent;
  }
  fi_cq_tagged_entry entry = {};
  entry.op_context = request.context;
  entry.flags = FI_SEND | FI_MSG;
  bool write_entry = !request.inject && WantsTxEntry(ep.util, request.flags);
  ReportSuccess(&ep.util, cq, write_entry, reserved, entry, FI_ADDR_NOTAVAIL,
                kSendCntr);
  return absl::OkStatus();
}

absl::Status PostRecv(UdpEndpoint& ep, const RecvRequest& request) {
  const fi_info& info = *ep.util.info;
  AppBuffer buffer;
  absl::StatusOr<size_t> capacity =
      Describe(ep, request.call, request.iov, request.desc, request.count,
               info.rx_attr->iov_limit, &buffer);
  if (!capacity.ok()) return capacity.status();

  std::lock_guard<OptionalMutex> lock(ep.util.mutex);
  if (ep.receives.size() >= info.rx_attr->size) {
    return CallError(request.call, FI_EAGAIN,
                     absl::StrCat("rx_attr->size (", info.rx_attr->size,
                                  ") receives are already posted"));
  }
  UtilCq* cq = ep.util.rx_cq;
  bool reserved = cq != nullptr;
  if (reserved && CqReserve(cq) != 0) {
    return CallError(request.call, FI_EAGAIN, "the receive CQ is full");
  }
  ep.receives.push_back(UdpReceive{std::move(buffer), *capacity,
                                   request.context, request.flags, reserved});
  return absl::OkStatus();
}

ssize_t Send(fid_ep* ep_fid, const SendRequest& request) {
  UdpEndpoint& ep = *ToUdpEndpoint(ep_fid);
  absl::Status status = PostSend(ep, request);
  return status.ok() ? 0 : UdpFail(ep, FI_LOG_EP_DATA, status);
}

ssize_t Recv(fid_ep* ep_fid, const RecvRequest& request) {
  UdpEndpoint& ep = *ToUdpEndpoint(ep_fid);
  absl::Status status = PostRecv(ep, request);
  return status.ok() ? 0 : UdpFail(ep, FI_LOG_EP_DATA, status);
}

// The checks of fi_sendmsg / fi_recvmsg before their message is read.
ssize_t BadMsg(fid_ep* ep_fid, const char* call, const fi_msg* msg,
               uint64_t flags, uint64_t known_flags) {
  UdpEndpoint& ep = *ToUdpEndpoint(ep_fid);
  if (msg == nullptr) {
    return UdpFail(ep, FI_LOG_EP_DATA,
                   CallError(call, FI_EINVAL, "msg is NULL"));
  }
  if ((flags & ~known_flags) != 0) {
    return UdpFail(ep, FI_LOG_EP_DATA,
                   CallError(call, FI_EBADFLAGS,
                             absl::StrCat("unsupported flags 0x",
                                          absl::Hex(flags & ~known_flags))));
  }
  return 0;
}

ssize_t UdpSend(fid_ep* ep, const void* buf, size_t len, void* desc,
                fi_addr_t dest_addr, void* context) {
  iovec iov = {const_cast<void*>(buf), len};
  return Send(ep, {"fi_send", &iov, &desc, 1, dest_addr, context,
                   ToUdpEndpoint(ep)->util.tx_op_flags, false});
}

ssize_t UdpSendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                 fi_addr_t dest_addr, void* context) {
  return Send(ep, {"fi_sendv", iov, desc, count, dest_addr, context,
                   ToUdpEndpoint(ep)->util.tx_op_flags, false});
}

ssize_t UdpSendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (ssize_t rc = BadMsg(ep, "fi_sendmsg", msg, flags, kSendMsgFlags);
      rc != 0) {
    return rc;
  }
  return Send(ep, {"fi_sendmsg", msg->msg_iov, msg->desc, msg->iov_count,
                   msg->addr, msg->context, flags, false});
}

ssize_t UdpInject(fid_ep* ep, const void* buf, size_t len,
                  fi_addr_t dest_addr) {
  iovec iov = {const_cast<void*>(buf), len};
  return Send(ep, {"fi_inject", &iov, nullptr, 1, dest_addr, nullptr, 0, true});
}

ssize_t NoRemoteData(fid_ep* ep, const char* call) {
  return UdpFail(*ToUdpEndpoint(ep), FI_LOG_EP_DATA,
                 CallError(call, FI_ENOSYS,
                           "udp carries no remote CQ data (cq_data_size 0)"));
}

ssize_t UdpSenddata(fid_ep* ep, const void*, size_t, void*, uint64_t, fi_addr_t,
                    void*) {
  return NoRemoteData(ep, "fi_senddata");
}

ssize_t UdpInjectdata(fid_ep* ep, const void*, size_t, uint64_t, fi_addr_t) {
  return NoRemoteData(ep, "fi_injectdata");
}

// Without FI_DIRECTED_RECV the source address of a receive is ignored.
ssize_t UdpRecv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t,
                void* context) {
  iovec iov = {buf, len};
  return Recv(ep, {"fi_recv", &iov, &desc, 1, context,
                   ToUdpEndpoint(ep)->util.rx_op_flags});
}

ssize_t UdpRecvv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                 fi_addr_t, void* context) {
  return Recv(ep, {"fi_recvv", iov, desc, count, context,
                   ToUdpEndpoint(ep)->util.rx_op_flags});
}

ssize_t UdpRecvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  if (ssize_t rc = BadMsg(ep, "fi_recvmsg", msg, flags, kRecvMsgFlags);
      rc != 0) {
    return rc;
  }
  return Recv(ep, {"fi_recvmsg", msg->msg_iov, msg->desc, msg->iov_count,
                   msg->context, flags});
}

}  // namespace

fi_ops_msg kUdpMsgOps = {
    .size = sizeof(fi_ops_msg),
    .recv = UdpRecv,
    .recvv = UdpRecvv,
    .recvmsg = UdpRecvmsg,
    .send = UdpSend,
    .sendv = UdpSendv,
    .sendmsg = UdpSendmsg,
    .inject = UdpInject,
    .senddata = UdpSenddata,
    .injectdata = UdpInjectdata,
};

}  // namespace fabric

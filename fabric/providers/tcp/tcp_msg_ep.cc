#include "fabric/providers/tcp/tcp_msg_ep.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/stream/shared_context.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/tcp/tcp_socket.h"
#include "fabric/providers/tcp/tcp_socket_stream.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/passive_ep.h"
#include "fabric/providers/util/syscalls.h"

namespace fabric {
namespace tcp {
namespace {

int Fail(const TcpMsgEp& ep, int fi_errno, const std::string& what) {
  FI_WARN(ep.log(), FI_LOG_EP_CTRL, "%s\n", what.c_str());
  return -fi_errno;
}

int Fail(const TcpMsgEp& ep, const absl::Status& status) {
  return LogFailure(ep.log(), FI_LOG_EP_CTRL, status);
}

// Queues a connection-management event with `len` bytes of data after it.
void PostCmEvent(TcpMsgEp* ep, uint32_t event, const void* data, size_t len) {
  PostConnectionEvent(&ep->base.util.eq->eq_fid, &ep->base.util.ep_fid.fid,
                      event, data, len, ep->log());
}

void PostCmError(TcpMsgEp* ep, int err, const std::vector<char>& data) {
  PostConnectionError(&ep->base.util.eq->eq_fid, &ep->base.util.ep_fid.fid,
                      err, err, data.data(), data.size());
}

// The handshake is done: the data phase starts on the socket, advanced by
// the domain's engine.
void StartConnection(TcpMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->base.util.mutex) {
  ep->link = std::make_unique<stream::Link>(
      &ep->base, std::make_unique<SocketStream>(ep->fd), FI_ADDR_NOTAVAIL);
  if (ep->setup_registered) ep->setup_engine()->Disarm(&ep->setup);
  ep->events_registered = true;
  ep->base.data_source = &ep->events;
  ep->engine()->Add(&ep->events);
  ep->state = MsgEpState::kConnected;
}

// Ends a connection attempt that failed before the data phase.
void FailConnect(TcpMsgEp* ep, int err, const std::vector<char>& data)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->base.util.mutex) {
  ep->state = MsgEpState::kShutdown;
  ep->setup_engine()->Disarm(&ep->setup);
  shutdown(ep->fd, SHUT_RDWR);
  PostCmError(ep, err, data);
}

void ProgressConnect(TcpMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->base.util.mutex) {
  pollfd pfd = {ep->fd, POLLOUT, 0};
  if (PollNow(&pfd, 1) != 1) return;
  int error = 0;
  socklen_t len = sizeof(error);
  getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &error, &len);
  if (error != 0) {
    FI_INFO(ep->log(), FI_LOG_EP_CTRL, "connect: %s\n", strerror(error));
    FailConnect(ep, error == ECONNREFUSED ? FI_ECONNREFUSED : error, {});
    return;
  }
  ep->setup_engine()->WantWrite(&ep->setup, false);
  absl::Status sent =
      SendCm(ep->fd, CmType::kConnRequest, AuthKeyOf(*ep->base.util.info),
             ep->connect_data.data(), ep->connect_data.size());
  if (!sent.ok()) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
            std::string(sent.message()).c_str());
    FailConnect(ep, ToFiErrno(sent) * -1, {});
    return;
  }
  ep->state = MsgEpState::kAwaitingResponse;
}

void ProgressResponse(TcpMsgEp* ep)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(ep->base.util.mutex) {
  CmReader::Result result = ep->cm_reader.Read(ep->fd);
  if (result == CmReader::kPending) return;
  if (result == CmReader::kFailed) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "%s\n",
            std::string(ep->cm_reader.error().message()).c_str());
    FailConnect(ep, -ToFiErrno(ep->cm_reader.error()), {});
    return;
  }
  const std::vector<char>& data = ep->cm_reader.data();
  if (ep->cm_reader.type() == CmType::kAccept &&
      ep->cm_reader.key() != AuthKeyOf(*ep->base.util.info)) {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL,
            "the server accepted with another authorization key\n");
    FailConnect(ep, FI_EKEYREJECTED, {});
  } else if (ep->cm_reader.type() == CmType::kAccept) {
    StartConnection(ep);
    PostCmEvent(ep, FI_CONNECTED, data.data(), data.size());
  } else if (ep->cm_reader.type() == CmType::kReject) {
    FailConnect(ep, FI_ECONNREFUSED, data);
  } else {
    FI_WARN(ep->log(), FI_LOG_EP_CTRL, "handshake: unexpected answer\n");
    FailConnect(ep, FI_EIO, {});
  }
}

// Without the endpoint's lock: the application makes no more calls on it,
// and once the engines have let go of it (Remove waits for a running pass)
// no progress pass touches it either.
int CloseMsgEp(fid* object) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  TcpMsgEp* ep = ToTcpMsgEp(reinterpret_cast<fid_ep*>(object));
  if (ep->setup_registered) ep->setup_engine()->Remove(&ep->setup);
  if (ep->events_registered) ep->engine()->Remove(&ep->events);
  // Reserved CQ room is given back; closing reports nothing.
  stream::UnreserveReceives(&ep->base);
  stream::ReleaseSharedContexts(&ep->base);
  if (ep->link != nullptr) {
    ep->link->Unreserve();
    ep->link.reset();  // closes the socket
  } else if (ep->fd >= 0) {
    close(ep->fd);
  }
  ReleaseUtilEndpoint(&ep->base.util);
  delete ep;
  return 0;
}

int Enable(TcpMsgEp* ep) {
  if (ep->base.util.enabled.load()) return 0;
  if (int rc = CheckEnable(ep->base.util); rc != 0) return rc;
  ep->base.util.enabled.store(true);
  return 0;
}

int ControlMsgEp(fid* object, int command, void* arg) {
  TcpMsgEp* ep = ToTcpMsgEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (command == FI_ENABLE) return Enable(ep);
  return ControlUtilEndpoint(&ep->base.util, command, arg);
}

// --- connection management -------------------------------------------------

int SetName(fid* object, void* addr, size_t addrlen) {
  TcpMsgEp* ep = ToTcpMsgEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (ep->state != MsgEpState::kIdle) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_setname: the endpoint is in use");
  }
  absl::StatusOr<IpAddress> address =
      IpFromUser(ep->base.util.info->addr_format, addr, addrlen);
  if (!address.ok()) return Fail(*ep, address.status());
  ep->bind_address = *address;
  return 0;
}

int GetName(fid* object, void* addr, size_t* addrlen) {
  TcpMsgEp* ep = ToTcpMsgEp(reinterpret_cast<fid_ep*>(object));
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (addrlen == nullptr) return Fail(*ep, FI_EINVAL, "fi_getname: addrlen");
  absl::StatusOr<IpAddress> address =
      ep->fd >= 0 ? LocalAddress(ep->fd)
      : ep->bind_address.has_value()
          ? absl::StatusOr<IpAddress>(*ep->bind_address)
          : FiError(FI_EADDRNOTAVAIL, "fi_getname: the endpoint has no "
                                      "address before fi_connect");
  if (!address.ok()) return Fail(*ep, address.status());
  return CopyAddressOut(*address, ep->base.util.info->addr_format, addr,
                        addrlen);
}

int GetPeer(fid_ep* ep_fid, void* addr, size_t* addrlen) {
  TcpMsgEp* ep = ToTcpMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (addrlen == nullptr) return Fail(*ep, FI_EINVAL, "fi_getpeer: addrlen");
  if (ep->state != MsgEpState::kConnected &&
      ep->state != MsgEpState::kAccepting) {
    return Fail(*ep, FI_ENOTCONN, "fi_getpeer: not connected");
  }
  absl::StatusOr<IpAddress> address = PeerAddress(ep->fd);
  if (!address.ok()) return Fail(*ep, address.status());
  return CopyAddressOut(*address, ep->base.util.info->addr_format, addr,
                        addrlen);
}

int Connect(fid_ep* ep_fid, const void* addr, const void* param,
            size_t paramlen) {
  TcpMsgEp* ep = ToTcpMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (ep->state != MsgEpState::kIdle) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_connect: the endpoint is in use");
  }
  if (paramlen > kMaxCmData || (paramlen > 0 && param == nullptr)) {
    return Fail(*ep, FI_EINVAL,
                absl::StrCat("fi_connect: connection data of ", paramlen,
                             " bytes (at most ", kMaxCmData, ")"));
  }
  uint32_t format = ep->base.util.info->addr_format;
  absl::StatusOr<IpAddress> peer =
      IpFromUser(format, addr, UserAddressLength(format, addr));
  if (!peer.ok()) return Fail(*ep, peer.status());
  if (int rc = Enable(ep); rc != 0) return rc;
  absl::StatusOr<int> fd =
      StartConnect(*peer, ep->bind_address,
                   ep->base.util.domain->info->domain_attr->tclass);
  if (!fd.ok()) return Fail(*ep, fd.status());
  ep->fd = *fd;
  const char* data = static_cast<const char*>(param);
  ep->connect_data.assign(data, data + paramlen);
  ep->state = MsgEpState::kConnecting;
  ep->setup_registered = true;
  ep->setup_engine()->Add(&ep->setup);
  ep->setup_engine()->WantWrite(&ep->setup, true);
  return 0;
}

int Accept(fid_ep* ep_fid, const void* param, size_t paramlen) {
  TcpMsgEp* ep = ToTcpMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (ep->state != MsgEpState::kAccepting) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_accept: the endpoint was not "
                                     "opened on a connection request");
  }
  if (paramlen > 0 && param == nullptr) {
    return Fail(*ep, FI_EINVAL, "fi_accept: param is NULL");
  }
  if (int rc = Enable(ep); rc != 0) return rc;
  if (absl::StatusOr<IpAddress> local = LocalAddress(ep->fd); local.ok()) {
    absl::Status tclass =
        ApplyTrafficClass(ep->fd, local->family(),
                          ep->base.util.domain->info->domain_attr->tclass);
    if (!tclass.ok()) return Fail(*ep, tclass);
  }
  absl::Status sent =
      SendCm(ep->fd, CmType::kAccept, AuthKeyOf(*ep->base.util.info), param,
             paramlen);
  if (!sent.ok()) return Fail(*ep, sent);
  StartConnection(ep);
  PostCmEvent(ep, FI_CONNECTED, nullptr, 0);
  return 0;
}

int Shutdown(fid_ep* ep_fid, uint64_t flags) {
  TcpMsgEp* ep = ToTcpMsgEp(ep_fid);
  MutexLock<OptionalMutex> lock(ep->base.util.mutex);
  if (flags != 0) return Fail(*ep, FI_EBADFLAGS, "fi_shutdown: flags");
  if (ep->state == MsgEpState::kIdle || ep->state == MsgEpState::kShutdown) {
    return ep->state == MsgEpState::kShutdown
               ? 0
               : Fail(*ep, FI_ENOTCONN, "fi_shutdown: not connected");
  }
  ep->local_shutdown = true;
  if (ep->link != nullptr) {
    ep->link->connection.Close(-FI_ECANCELED);
  } else {
    shutdown(ep->fd, SHUT_RDWR);
    ep->state = MsgEpState::kShutdown;
    if (ep->setup_registered) ep->setup_engine()->Disarm(&ep->setup);
  }
  return 0;
}

fi_ops kMsgEpFidOps = MakeFidOps({.close = CloseMsgEp,
                                  .bind = stream::BindStreamEp,
                                  .control = ControlMsgEp});

fi_ops_cm kMsgEpCmOps = ConnectedCmOps({.setname = SetName,
                                        .getname = GetName,
                                        .getpeer = GetPeer,
                                        .connect = Connect,
                                        .accept = Accept,
                                        .shutdown = Shutdown});

}  // namespace

// --- events from the connection and the progress engine -------------------

void TcpMsgEpSetup::Progress() {
  MutexLock<OptionalMutex> lock(ep_->base.util.mutex);
  if (ep_->state == MsgEpState::kConnecting) {
    ProgressConnect(ep_);
  } else if (ep_->state == MsgEpState::kAwaitingResponse) {
    ProgressResponse(ep_);
  }
}

int TcpMsgEpSetup::progress_fd() const { return ep_->fd; }

bool TcpMsgEpSetup::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->control_progress ==
         FI_PROGRESS_AUTO;
}

void TcpMsgEpEvents::Progress() {
  MutexLock<OptionalMutex> lock(ep_->base.util.mutex);
  if (ep_->state != MsgEpState::kConnected) return;
  stream::FinishStartedPeerMsgs(&ep_->base);
  stream::ResumeAfterCqRoom(&ep_->base);
  ep_->link->connection.Progress();
}

int TcpMsgEpEvents::progress_fd() const { return ep_->fd; }

bool TcpMsgEpEvents::auto_progress() const {
  return ep_->base.util.domain->info->domain_attr->data_progress ==
         FI_PROGRESS_AUTO;
}

stream::Link* TcpMsgEpEvents::LinkFor(fi_addr_t, int* error) {
  ep_->base.util.mutex.AssertHeld();
  if (ep_->state != MsgEpState::kConnected) {
    FI_WARN(ep_->log(), FI_LOG_EP_DATA,
            "transmit on an endpoint that is not connected\n");
    *error = -FI_ENOTCONN;
    return nullptr;
  }
  return ep_->link.get();
}

void TcpMsgEpEvents::LinkBacklog(stream::Link*, bool backlogged) {
  ep_->engine()->WantWrite(this, backlogged);
}

void TcpMsgEpEvents::ReceivePosted() {
  ep_->base.util.mutex.AssertHeld();
  if (ep_->state == MsgEpState::kConnected &&
      ep_->link->connection.stalled()) {
    ep_->link->connection.Progress();  // a waiting message may take it now
  }
}

void TcpMsgEpEvents::LinkClosed(stream::Link*, int error) {
  ep_->base.util.mutex.AssertHeld();
  ep_->state = MsgEpState::kShutdown;
  ep_->engine()->Disarm(this);
  if (ep_->local_shutdown) {
    stream::FailReceives(&ep_->base, FI_ECANCELED);
    return;
  }
  if (error != 0) {
    FI_WARN(ep_->log(), FI_LOG_EP_DATA, "connection lost: %s\n",
            fi_strerror(-error));
  }
  stream::FailReceives(&ep_->base, error != 0 ? -error : FI_ECONNRESET);
  PostCmEvent(ep_, FI_SHUTDOWN, nullptr, 0);
}

// Opens an endpoint: on a connection request's socket when info->handle is
// one (the server side), else idle until fi_connect.
int OpenTcpMsgEp(fid_domain* domain_fid, fi_info* info, fid_ep** ep_out,
                 void* context) {
  UtilDomain* domain = FidCast<UtilDomain>(domain_fid);
  const fi_provider* log = domain->fabric->provider->c_provider();
  bool from_request = info->handle != nullptr &&
                      info->handle->fclass == FI_CLASS_CONNREQ;
  if (from_request && AsTcpConnReq(info->handle) == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL,
            "fi_endpoint: info->handle is not a pending connection "
            "request\n");
    return -FI_EINVAL;
  }
  auto ep = std::make_unique<TcpMsgEp>();
  ep->base.util.ep_fid = {};
  absl::Status status =
      InitUtilEndpoint(&ep->base.util, domain, info, context, &kMsgEpFidOps);
  if (!status.ok()) {
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  stream::InstallDataPathOps(&ep->base, *info, &kMsgEpCmOps);
  ep->base.util.cm_data_size = kMaxCmData;
  if (from_request) {
    ep->fd = TakeTcpConnReq(info->handle);
    if (ep->fd < 0) {
      ReleaseUtilEndpoint(&ep->base.util);
      FI_WARN(log, FI_LOG_EP_CTRL, "fi_endpoint: the connection request "
                                   "was already taken\n");
      return -FI_EINVAL;
    }
    ep->state = MsgEpState::kAccepting;
  } else if (info->src_addr != nullptr) {
    absl::StatusOr<IpAddress> source =
        IpFromUser(info->addr_format, info->src_addr, info->src_addrlen);
    // Not yet seen by any other thread: the lock only satisfies the
    // analysis.
    MutexLock<OptionalMutex> lock(ep->base.util.mutex);
    if (source.ok()) ep->bind_address = *source;
  }
  *ep_out = &ep.release()->base.util.ep_fid;
  return 0;
}

}  // namespace tcp
}  // namespace fabric

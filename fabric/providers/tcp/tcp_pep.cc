// The tcp provider's passive endpoint (fi_passive_ep, fi_listen, fi_reject)
// and the connection requests it hands out with FI_CONNREQ.
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <list>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/tcp/tcp_msg_ep.h"
#include "fabric/providers/tcp/tcp_socket.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/ip_socket.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/passive_ep.h"

namespace fabric {
namespace tcp {
namespace {

constexpr int kBacklog = 1024;

// An accepted socket whose connection request is still arriving.
struct Incoming {
  int fd;
  CmReader reader;
};

struct TcpPep;

class PepEvents : public ProgressSource {
 public:
  explicit PepEvents(TcpPep* pep) : pep_(pep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

 private:
  TcpPep* pep_;
};

struct TcpPep {
  TcpPep() : events(this) {}

  UtilPep util;  // first
  PepEvents events;
  // The bound (and, once listening, listening) socket.
  int fd ABSL_GUARDED_BY(util.mutex) = -1;
  int epoll_fd = -1;  // fd and the incoming sockets: the progress fd; fixed
  std::list<Incoming> incoming ABSL_GUARDED_BY(util.mutex);
  // Handed out, not yet taken or rejected.
  std::list<TcpConnReq*> requests ABSL_GUARDED_BY(util.mutex);

  const fi_provider* log() const { return util.log(); }
};
FABRIC_BEGINS_WITH(TcpPep, util);

TcpPep* ToTcpPep(fid* object) { return FidCast<TcpPep>(object); }

void Watch(TcpPep* pep, int fd, int op) {
  epoll_event event = {};
  event.events = EPOLLIN;
  event.data.fd = fd;
  epoll_ctl(pep->epoll_fd, op, fd, &event);
}

// Posts FI_CONNREQ for a complete request.
void PostRequest(TcpPep* pep, Incoming& in)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(pep->util.mutex) {
  absl::StatusOr<IpAddress> peer = PeerAddress(in.fd);
  absl::StatusOr<IpAddress> local = LocalAddress(in.fd);
  InfoPtr info = DupInfo(*pep->util.info);
  if (!peer.ok() || !local.ok() || info == nullptr) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "dropping a connection request (no address or memory)\n");
    close(in.fd);
    return;
  }
  uint32_t format = pep->util.info->addr_format;
  auto set_address = [format](void** field, size_t* len,
                              const IpAddress& address) {
    size_t needed = 0;
    CopyAddressOut(address, format, nullptr, &needed);
    std::vector<char> bytes(needed);
    if (CopyAddressOut(address, format, bytes.data(), &needed) == 0) {
      SetAddress(field, len, bytes.data(), needed);
    }
  };
  set_address(&info->dest_addr, &info->dest_addrlen, *peer);
  set_address(&info->src_addr, &info->src_addrlen, *local);
  auto* request = new TcpConnReq;
  request->conn_fid = {};
  InitFid(&request->conn_fid, FI_CLASS_CONNREQ, nullptr, nullptr);
  request->fd = in.fd;
  request->pep = &pep->util.pep_fid;
  AddLiveObject(&request->conn_fid, pep->util.fabric->provider->name(),
                "connreq");
  info->handle = &request->conn_fid;
  pep->requests.push_back(request);
  const std::vector<char>& data = in.reader.data();
  if (!PostConnReq(&pep->util, std::move(info), data.data(), data.size())) {
    pep->requests.remove(request);
    FreeTcpConnReq(request);
  }
}

int ClosePep(fid* object) {
  TcpPep* pep = ToTcpPep(object);
  // Not under the lock: Remove waits for a running Progress, which takes it.
  if (Listening(pep->util)) pep->util.fabric->progress->Remove(&pep->events);
  {
    MutexLock lock(pep->util.mutex);
    for (Incoming& in : pep->incoming) close(in.fd);
    for (TcpConnReq* request : pep->requests) FreeTcpConnReq(request);
    if (pep->fd >= 0) close(pep->fd);
  }
  if (pep->epoll_fd >= 0) close(pep->epoll_fd);
  ReleaseUtilPep(&pep->util);
  delete pep;
  return 0;
}

int SetPepName(fid* object, void* addr, size_t addrlen) {
  TcpPep* pep = ToTcpPep(object);
  MutexLock lock(pep->util.mutex);
  if (pep->util.listening) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL, "fi_setname: already listening\n");
    return -FI_EOPBADSTATE;
  }
  absl::StatusOr<IpAddress> address =
      IpFromUser(pep->util.info->addr_format, addr, addrlen);
  absl::StatusOr<int> fd =
      address.ok() ? BoundSocket(*address) : address.status();
  if (!fd.ok()) return FailPep(pep->util, fd.status());
  Watch(pep, pep->fd, EPOLL_CTL_DEL);
  close(pep->fd);
  pep->fd = *fd;
  Watch(pep, pep->fd, EPOLL_CTL_ADD);
  return 0;
}

int GetPepName(fid* object, void* addr, size_t* addrlen) {
  TcpPep* pep = ToTcpPep(object);
  MutexLock lock(pep->util.mutex);
  absl::StatusOr<IpAddress> address = LocalAddress(pep->fd);
  if (!address.ok()) return FailPep(pep->util, address.status());
  return CopyAddressOut(*address, pep->util.info->addr_format, addr, addrlen);
}

int Listen(fid_pep* pep_fid) {
  TcpPep* pep = ToTcpPep(&pep_fid->fid);
  // Runs under pep->util.mutex, which ListenUtilPep holds as the UtilPep's:
  // the analysis cannot tie the two names together.
  return ListenUtilPep(
      &pep->util, &pep->events, [pep]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        if (listen(pep->fd, kBacklog) != 0) {
          return FiError(errno, absl::StrCat("listen: ", strerror(errno)));
        }
        return absl::OkStatus();
      });
}

int Reject(fid_pep* pep_fid, fid_t handle, const void* param, size_t paramlen) {
  TcpPep* pep = ToTcpPep(&pep_fid->fid);
  MutexLock lock(pep->util.mutex);
  TcpConnReq* request = AsTcpConnReq(handle);
  if (request == nullptr || request->pep != pep_fid || request->fd < 0) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "fi_reject: not a pending request of this passive endpoint\n");
    return -FI_EINVAL;
  }
  if (paramlen > 0 && param == nullptr) return -FI_EINVAL;
  absl::Status sent =
      SendCm(request->fd, CmType::kReject, std::string(), param, paramlen);
  pep->requests.remove(request);
  FreeTcpConnReq(request);
  return sent.ok() ? 0 : FailPep(pep->util, sent);
}

fi_ops kPepFidOps = MakeFidOps(
    {.close = ClosePep, .bind = BindUtilPep, .control = ControlUtilPep});

fi_ops_cm kPepCmOps = PassiveCmOps(SetPepName, GetPepName, Listen, Reject);

}  // namespace

void PepEvents::Progress() {
  MutexLock lock(pep_->util.mutex);
  for (int fd; (fd = AcceptSocket(pep_->fd, pep_->log())) >= 0;) {
    pep_->incoming.push_back(Incoming{fd, CmReader()});
    Watch(pep_, fd, EPOLL_CTL_ADD);
  }
  for (auto it = pep_->incoming.begin(); it != pep_->incoming.end();) {
    CmReader::Result result = it->reader.Read(it->fd);
    if (result == CmReader::kPending) {
      ++it;
      continue;
    }
    Watch(pep_, it->fd, EPOLL_CTL_DEL);
    bool request =
        result == CmReader::kDone && it->reader.type() == CmType::kConnRequest;
    if (request && it->reader.key() != AuthKeyOf(*pep_->util.info)) {
      // Endpoints with different keys cannot talk (fi_domain(3)): refused
      // before the application sees the request.
      FI_WARN(pep_->log(), FI_LOG_EP_CTRL,
              "refusing a connection with another authorization key\n");
      (void)SendCm(it->fd, CmType::kReject, std::string(), nullptr, 0);
      close(it->fd);
    } else if (request) {
      PostRequest(pep_, *it);
    } else {
      FI_WARN(pep_->log(), FI_LOG_EP_CTRL, "dropping a connection: %s\n",
              result == CmReader::kDone
                  ? "not a connection request"
                  : std::string(it->reader.error().message()).c_str());
      close(it->fd);
    }
    it = pep_->incoming.erase(it);
  }
}

int PepEvents::progress_fd() const { return pep_->epoll_fd; }

bool PepEvents::auto_progress() const { return pep_->util.auto_progress(); }

TcpConnReq* AsTcpConnReq(fid* handle) {
  if (!IsLiveObject(handle, FI_CLASS_CONNREQ)) return nullptr;
  return FidCast<TcpConnReq>(handle);
}

void FreeTcpConnReq(TcpConnReq* request) {
  RemoveLiveObject(&request->conn_fid);
  if (request->fd >= 0) close(request->fd);
  delete request;
}

int TakeTcpConnReq(fid* handle) {
  TcpConnReq* request = AsTcpConnReq(handle);
  if (request == nullptr) return -1;
  TcpPep* pep = ToTcpPep(&request->pep->fid);
  MutexLock lock(pep->util.mutex);
  int fd = request->fd;
  request->fd = -1;
  pep->requests.remove(request);
  FreeTcpConnReq(request);
  return fd;
}

int OpenTcpPassiveEp(fid_fabric* fabric_fid, fi_info* info, fid_pep** pep_out,
                     void* context) {
  UtilFabric* fabric = ToUtilFabric(fabric_fid);
  const fi_provider* log = fabric->provider->c_provider();
  if (info == nullptr || pep_out == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_passive_ep: info and pep needed\n");
    return -FI_EINVAL;
  }
  // Without src_addr (as libfabric allows) the endpoint starts on the
  // wildcard address of its format, any port: fi_setname names it before
  // fi_listen, or fi_getname tells where it listens.
  absl::StatusOr<IpAddress> address =
      info->src_addr != nullptr
          ? IpFromUser(info->addr_format, info->src_addr, info->src_addrlen)
          : WildcardAddress(info->addr_format);
  absl::StatusOr<int> fd =
      address.ok() ? BoundSocket(*address) : address.status();
  int epoll_fd = fd.ok() ? epoll_create1(EPOLL_CLOEXEC) : -1;
  auto pep = std::make_unique<TcpPep>();
  absl::Status status =
      !fd.ok() ? fd.status()
      : epoll_fd < 0
          ? FiError(errno, absl::StrCat("epoll_create1: ", strerror(errno)))
          : InitUtilPep(&pep->util, fabric, *info, context, &kPepFidOps,
                        &kPepCmOps, kMaxCmData);
  if (!status.ok()) {
    if (fd.ok()) close(*fd);
    if (epoll_fd >= 0) close(epoll_fd);
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  pep->epoll_fd = epoll_fd;
  {
    MutexLock lock(pep->util.mutex);
    pep->fd = *fd;
    Watch(pep.get(), pep->fd, EPOLL_CTL_ADD);
  }
  *pep_out = &pep.release()->util.pep_fid;
  return 0;
}

}  // namespace tcp
}  // namespace fabric

// The verbs passive endpoint (fi_passive_ep, fi_listen, fi_reject): a
// listening rdma_cm id on a channel of its own, and the connection
// requests it hands out with FI_CONNREQ.
#include <errno.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <list>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/live_objects.h"
#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"
#include "fabric/providers/util/passive_ep.h"
#include "fabric/providers/verbs/verbs_api.h"
#include "fabric/providers/verbs/verbs_cm_address.h"
#include "fabric/providers/verbs/verbs_msg_ep.h"
#include "fabric/providers/verbs/verbs_requests.h"

namespace fabric {
namespace verbs {
namespace {

constexpr int kBacklog = 1024;

struct VerbsPep;

class PepEvents : public ProgressSource {
 public:
  explicit PepEvents(VerbsPep* pep) : pep_(pep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

 private:
  VerbsPep* pep_;
};

struct VerbsPep {
  VerbsPep() : events(this) {}

  UtilPep util;  // first
  const VerbsApi* api = nullptr;
  PepEvents events;
  rdma_event_channel* channel = nullptr;  // fixed from open on
  // Bound, and once listening, listening.
  rdma_cm_id* id ABSL_GUARDED_BY(util.mutex) = nullptr;
  // Handed out, not taken or rejected.
  std::list<VerbsConnReq*> requests ABSL_GUARDED_BY(util.mutex);

  const fi_provider* log() const { return util.log(); }
};
FABRIC_BEGINS_WITH(VerbsPep, util);

VerbsPep* ToVerbsPep(fid* object) { return FidCast<VerbsPep>(object); }

void FreeRequest(VerbsPep* pep, VerbsConnReq* request) {
  RemoveLiveObject(&request->conn_fid);
  if (request->id != nullptr) pep->api->destroy_id(request->id);
  delete request;
}

// Sets `field` to `address` in the passive endpoint's format (FI_SOCKADDR
// stays; a specific format is the address's own).
void SetInfoAddress(const rdma_cm_id& id, bool source, void** field,
                    size_t* len) {
  const ::sockaddr* address =
      source ? &id.route.addr.src_addr : &id.route.addr.dst_addr;
  absl::StatusOr<CmAddress> copy = CmAddressFrom(address);
  if (copy.ok()) SetAddress(field, len, &copy->storage, copy->length);
}

// Posts FI_CONNREQ for the request on `id` (its event already acked). A
// request the application cannot get is rejected.
void PostRequest(VerbsPep* pep, rdma_cm_id* id, const rdma_conn_param& param,
                 const std::vector<uint8_t>& data)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(pep->util.mutex) {
  InfoPtr info = DupInfo(*pep->util.info);
  if (info == nullptr) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "refusing a connection request (no memory)\n");
    pep->api->reject(id, nullptr, 0);
    pep->api->destroy_id(id);
    return;
  }
  SetInfoAddress(*id, true, &info->src_addr, &info->src_addrlen);
  SetInfoAddress(*id, false, &info->dest_addr, &info->dest_addrlen);
  // A listener on a wildcard address hears requests on every device: the
  // endpoint for this one belongs to a domain of its device.
  if (id->verbs != nullptr && info->domain_attr != nullptr) {
    SetString(&info->domain_attr->name,
              pep->api->get_device_name(id->verbs->device));
  }
  auto* request = new VerbsConnReq;
  request->conn_fid = {};
  InitFid(&request->conn_fid, FI_CLASS_CONNREQ, nullptr, nullptr);
  request->id = id;
  request->pep = &pep->util.pep_fid;
  request->responder_resources = param.responder_resources;
  request->initiator_depth = param.initiator_depth;
  AddLiveObject(&request->conn_fid, pep->util.fabric->provider->name(),
                "connreq");
  info->handle = &request->conn_fid;
  pep->requests.push_back(request);
  if (!PostConnReq(&pep->util, std::move(info), data.data(), data.size())) {
    pep->requests.remove(request);
    pep->api->reject(id, nullptr, 0);
    FreeRequest(pep, request);
  }
}

// A fresh id on the passive endpoint's channel, bound to `address`.
absl::StatusOr<rdma_cm_id*> BoundId(VerbsPep* pep, CmAddress address) {
  rdma_cm_id* id = nullptr;
  if (pep->api->create_id(pep->channel, &id, pep, RDMA_PS_TCP) != 0) {
    return CallFailed("rdma_create_id");
  }
  if (pep->api->bind_addr(id, address.address()) != 0) {
    absl::Status failed = CallFailed("rdma_bind_addr");
    pep->api->destroy_id(id);
    return failed;
  }
  return id;
}

int ClosePep(fid* object) {
  VerbsPep* pep = ToVerbsPep(object);
  // Not under the lock: Remove waits for a running Progress, which takes it.
  if (Listening(pep->util)) pep->util.fabric->progress->Remove(&pep->events);
  {
    MutexLock lock(pep->util.mutex);
    for (VerbsConnReq* request : pep->requests) {
      pep->api->reject(request->id, nullptr, 0);
      FreeRequest(pep, request);
    }
    if (pep->id != nullptr) pep->api->destroy_id(pep->id);
  }
  if (pep->channel != nullptr) pep->api->destroy_event_channel(pep->channel);
  ReleaseUtilPep(&pep->util);
  delete pep;
  return 0;
}

int SetPepName(fid* object, void* addr, size_t addrlen) {
  VerbsPep* pep = ToVerbsPep(object);
  MutexLock lock(pep->util.mutex);
  if (pep->util.listening) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL, "fi_setname: already listening\n");
    return -FI_EOPBADSTATE;
  }
  absl::StatusOr<CmAddress> address =
      CmAddressOf(pep->util.info->addr_format, addr, addrlen);
  if (!address.ok()) return FailPep(pep->util, address.status());
  // An id binds once: a new one replaces it.
  absl::StatusOr<rdma_cm_id*> id = BoundId(pep, *address);
  if (!id.ok()) return FailPep(pep->util, id.status());
  if (pep->id != nullptr) pep->api->destroy_id(pep->id);
  pep->id = *id;
  return 0;
}

int GetPepName(fid* object, void* addr, size_t* addrlen) {
  VerbsPep* pep = ToVerbsPep(object);
  MutexLock lock(pep->util.mutex);
  if (addrlen == nullptr) {
    return FailPep(pep->util,
                   FiError(FI_EINVAL, "fi_getname: addrlen is NULL"));
  }
  if (pep->id == nullptr) {
    return FailPep(pep->util,
                   FiError(FI_EADDRNOTAVAIL, "fi_getname: not bound"));
  }
  absl::StatusOr<CmAddress> address =
      CmAddressFrom(&pep->id->route.addr.src_addr);
  if (!address.ok()) return FailPep(pep->util, address.status());
  return CopyCmAddressOut(*address, addr, addrlen);
}

// The wildcard address of the passive endpoint's format, any port: what
// a listener named by neither info->src_addr nor fi_setname binds to (as
// tcp's does), hearing requests on every device.
absl::StatusOr<CmAddress> WildcardCmAddress(uint32_t addr_format) {
  if (addr_format == FI_SOCKADDR_IN6) {
    sockaddr_in6 any = {};
    any.sin6_family = AF_INET6;
    return CmAddressOf(addr_format, &any, sizeof(any));
  }
  sockaddr_in any = {};
  any.sin_family = AF_INET;
  return CmAddressOf(FI_SOCKADDR_IN, &any, sizeof(any));
}

int Listen(fid_pep* pep_fid) {
  VerbsPep* pep = ToVerbsPep(&pep_fid->fid);
  // Runs under pep->util.mutex, which ListenUtilPep holds as the UtilPep's:
  // the analysis cannot tie the two names together.
  return ListenUtilPep(&pep->util, &pep->events,
                       [pep]() ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::Status {
                         if (pep->id == nullptr) {
                           absl::StatusOr<CmAddress> any =
                               WildcardCmAddress(pep->util.info->addr_format);
                           if (!any.ok()) return any.status();
                           absl::StatusOr<rdma_cm_id*> id = BoundId(pep, *any);
                           if (!id.ok()) return id.status();
                           pep->id = *id;
                         }
                         if (pep->api->listen(pep->id, kBacklog) != 0) {
                           return CallFailed("rdma_listen");
                         }
                         return absl::OkStatus();
                       });
}

int Reject(fid_pep* pep_fid, fid_t handle, const void* param, size_t paramlen) {
  VerbsPep* pep = ToVerbsPep(&pep_fid->fid);
  MutexLock lock(pep->util.mutex);
  VerbsConnReq* request = AsVerbsConnReq(handle);
  if (request == nullptr || request->pep != pep_fid) {
    FI_WARN(pep->log(), FI_LOG_EP_CTRL,
            "fi_reject: not a pending request of this passive endpoint\n");
    return -FI_EINVAL;
  }
  if (paramlen > kCmDataSize || (paramlen > 0 && param == nullptr)) {
    return FailPep(
        pep->util,
        FiError(FI_EINVAL, absl::StrCat("fi_reject: data of ", paramlen,
                                        " bytes (at most ", kCmDataSize, ")")));
  }
  std::vector<uint8_t> data = PackCmData(param, paramlen);
  int rc = pep->api->reject(request->id, data.data(),
                            static_cast<uint8_t>(data.size()));
  absl::Status failed = rc != 0 ? CallFailed("rdma_reject") : absl::OkStatus();
  pep->requests.remove(request);
  FreeRequest(pep, request);
  return failed.ok() ? 0 : FailPep(pep->util, failed);
}

fi_ops kPepFidOps = MakeFidOps(
    {.close = ClosePep, .bind = BindUtilPep, .control = ControlUtilPep});

fi_ops_cm kPepCmOps = PassiveCmOps(SetPepName, GetPepName, Listen, Reject);

}  // namespace

void PepEvents::Progress() {
  MutexLock lock(pep_->util.mutex);
  const VerbsApi& api = *pep_->api;
  rdma_cm_event* event = nullptr;
  while (api.get_cm_event(pep_->channel, &event) == 0) {
    if (EnumValue(event->event) != RDMA_CM_EVENT_CONNECT_REQUEST) {
      // Events of requests not taken yet (a requester that gave up): the
      // request stays until fi_reject or fi_endpoint finds it gone.
      FI_DBG(pep_->log(), FI_LOG_EP_CTRL, "rdma_cm event %s ignored\n",
             api.event_str(event->event));
      api.ack_cm_event(event);
      continue;
    }
    rdma_cm_id* id = event->id;
    const rdma_conn_param param = event->param.conn;
    absl::StatusOr<std::vector<uint8_t>> data =
        UnpackCmData(param.private_data, param.private_data_len);
    // The request's id lives on: only the event is released.
    api.ack_cm_event(event);
    if (!data.ok()) {
      FI_WARN(pep_->log(), FI_LOG_EP_CTRL,
              "refusing a connection request: "
              "%s\n",
              std::string(data.status().message()).c_str());
      api.reject(id, nullptr, 0);
      api.destroy_id(id);
      continue;
    }
    PostRequest(pep_, id, param, *data);
  }
}

int PepEvents::progress_fd() const { return pep_->channel->fd; }

bool PepEvents::auto_progress() const { return pep_->util.auto_progress(); }

VerbsConnReq* AsVerbsConnReq(fid* handle) {
  if (!IsLiveObject(handle, FI_CLASS_CONNREQ)) return nullptr;
  return FidCast<VerbsConnReq>(handle);
}

bool TakeVerbsConnReq(fid* handle, VerbsConnReq* taken) {
  VerbsConnReq* request = AsVerbsConnReq(handle);
  if (request == nullptr) return false;
  VerbsPep* pep = ToVerbsPep(&request->pep->fid);
  MutexLock lock(pep->util.mutex);
  *taken = *request;
  request->id = nullptr;  // the endpoint's now
  pep->requests.remove(request);
  FreeRequest(pep, request);
  return true;
}

int OpenVerbsPassiveEp(fid_fabric* fabric_fid, fi_info* info, fid_pep** pep_out,
                       void* context) {
  UtilFabric* fabric = ToUtilFabric(fabric_fid);
  const fi_provider* log = fabric->provider->c_provider();
  if (info == nullptr || pep_out == nullptr) {
    FI_WARN(log, FI_LOG_EP_CTRL, "fi_passive_ep: info and pep needed\n");
    return -FI_EINVAL;
  }
  absl::StatusOr<const VerbsApi*> api = LoadVerbsApi();
  if (!api.ok()) return ToFiErrno(api.status());
  auto* pep = new VerbsPep;
  pep->api = *api;
  absl::Status status = InitUtilPep(&pep->util, fabric, *info, context,
                                    &kPepFidOps, &kPepCmOps, kCmDataSize);
  if (!status.ok()) {
    delete pep;
    return LogFailure(log, FI_LOG_EP_CTRL, status);
  }
  pep->channel = pep->api->create_event_channel();
  if (pep->channel == nullptr) status = CallFailed("rdma_create_event_channel");
  if (status.ok()) {
    status = MakeNonBlocking(pep->channel->fd, "the rdma_cm event channel");
  }
  if (status.ok() && info->src_addr != nullptr) {
    absl::StatusOr<CmAddress> address =
        CmAddressOf(info->addr_format, info->src_addr, info->src_addrlen);
    absl::StatusOr<rdma_cm_id*> id =
        address.ok() ? BoundId(pep, *address) : address.status();
    if (id.ok()) {
      MutexLock lock(pep->util.mutex);
      pep->id = *id;
    } else {
      status = id.status();
    }
  }
  if (!status.ok()) {
    int rc = FailPep(pep->util, status);
    ClosePep(&pep->util.pep_fid.fid);
    return rc;
  }
  *pep_out = &pep->util.pep_fid;
  return 0;
}

}  // namespace verbs
}  // namespace fabric

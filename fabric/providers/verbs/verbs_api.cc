#include "fabric/providers/verbs/verbs_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace verbs {
namespace {

constexpr char kIbverbs[] = "libibverbs.so.1";
constexpr char kRdmacm[] = "librdmacm.so.1";

// Resolves calls from one library, remembering the first that is missing.
class Loader {
 public:
  explicit Loader(void* library) : library_(library) {}

  template <typename Function>
  void operator()(const char* name, Function** function) {
    *function = reinterpret_cast<Function*>(dlsym(library_, name));
    if (*function == nullptr && missing_.empty()) missing_ = name;
  }
  const std::string& missing() const { return missing_; }

 private:
  void* library_;
  std::string missing_;
};

absl::StatusOr<void*> Open(const char* name) {
  void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return FiError(FI_ENODATA, absl::StrCat("dlopen: ", dlerror()));
  }
  return library;
}

absl::Status LoadIbverbs(void* library, VerbsApi* api) {
  Loader load(library);
  load("ibv_get_device_list", &api->get_device_list);
  load("ibv_free_device_list", &api->free_device_list);
  load("ibv_get_device_name", &api->get_device_name);
  load("ibv_open_device", &api->open_device);
  load("ibv_close_device", &api->close_device);
  load("ibv_query_device", &api->query_device);
  load("ibv_query_port", &api->query_port_compat);
  load("ibv_query_gid", &api->query_gid);
  load("ibv_alloc_pd", &api->alloc_pd);
  load("ibv_dealloc_pd", &api->dealloc_pd);
  load("ibv_reg_mr", &api->reg_mr);
  load("ibv_dereg_mr", &api->dereg_mr);
  load("ibv_create_comp_channel", &api->create_comp_channel);
  load("ibv_destroy_comp_channel", &api->destroy_comp_channel);
  load("ibv_create_cq", &api->create_cq);
  load("ibv_destroy_cq", &api->destroy_cq);
  load("ibv_create_srq", &api->create_srq);
  load("ibv_destroy_srq", &api->destroy_srq);
  load("ibv_get_cq_event", &api->get_cq_event);
  load("ibv_ack_cq_events", &api->ack_cq_events);
  load("ibv_wc_status_str", &api->wc_status_str);
  load("ibv_modify_qp", &api->modify_qp);
  load("ibv_create_qp", &api->create_queue_pair);
  load("ibv_destroy_qp", &api->destroy_queue_pair);
  load("ibv_create_ah", &api->create_ah);
  load("ibv_destroy_ah", &api->destroy_ah);
  if (load.missing().empty()) return absl::OkStatus();
  return FiError(FI_ENODATA,
                 absl::StrCat(kIbverbs, " has no ", load.missing()));
}

absl::Status LoadRdmacm(void* library, VerbsApi* api) {
  Loader load(library);
  load("rdma_create_event_channel", &api->create_event_channel);
  load("rdma_destroy_event_channel", &api->destroy_event_channel);
  load("rdma_create_id", &api->create_id);
  load("rdma_destroy_id", &api->destroy_id);
  load("rdma_bind_addr", &api->bind_addr);
  load("rdma_resolve_addr", &api->resolve_addr);
  load("rdma_resolve_route", &api->resolve_route);
  load("rdma_listen", &api->listen);
  load("rdma_connect", &api->connect);
  load("rdma_accept", &api->accept);
  load("rdma_reject", &api->reject);
  load("rdma_disconnect", &api->disconnect);
  load("rdma_get_cm_event", &api->get_cm_event);
  load("rdma_ack_cm_event", &api->ack_cm_event);
  load("rdma_create_qp", &api->create_qp);
  load("rdma_destroy_qp", &api->destroy_qp);
  load("rdma_migrate_id", &api->migrate_id);
  load("rdma_event_str", &api->event_str);
  load("rdma_get_devices", &api->get_devices);
  load("rdma_free_devices", &api->free_devices);
  if (load.missing().empty()) return absl::OkStatus();
  return FiError(FI_ENODATA, absl::StrCat(kRdmacm, " has no ", load.missing()));
}

}  // namespace

int VerbsApi::QueryPort(ibv_context* context, uint8_t port,
                        ibv_port_attr* attr) const {
  verbs_context* extended = verbs_get_ctx_op(context, query_port);
  if (extended != nullptr) {
    return extended->query_port(context, port, attr, sizeof(*attr));
  }
  memset(attr, 0, sizeof(*attr));
  return query_port_compat(context, port,
                           reinterpret_cast<_compat_ibv_port_attr*>(attr));
}

uint32_t VerbsApi::MaxInlineData(ibv_context* context, uint32_t limit) const {
  ibv_pd* pd = alloc_pd(context);
  if (pd == nullptr) return 0;
  ibv_cq* cq = create_cq(context, 1, nullptr, nullptr, 0);
  uint32_t accepted = 0;
  for (uint32_t size = limit; cq != nullptr; size /= 2) {
    ibv_qp_init_attr attr = {};
    attr.send_cq = cq;
    attr.recv_cq = cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 1;
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = size;
    if (ibv_qp* qp = create_queue_pair(pd, &attr); qp != nullptr) {
      destroy_queue_pair(qp);
      accepted = size;
      break;
    }
    if (size == 0) break;
  }
  if (cq != nullptr) destroy_cq(cq);
  dealloc_pd(pd);
  return accepted;
}

absl::StatusOr<const VerbsApi*> LoadVerbsApi() {
  static const absl::StatusOr<const VerbsApi*> loaded =
      []() -> absl::StatusOr<const VerbsApi*> {
    absl::StatusOr<void*> ibverbs = Open(kIbverbs);
    if (!ibverbs.ok()) return ibverbs.status();
    absl::StatusOr<void*> rdmacm = Open(kRdmacm);
    if (!rdmacm.ok()) return rdmacm.status();
    static VerbsApi api;
    if (absl::Status status = LoadIbverbs(*ibverbs, &api); !status.ok()) {
      return status;
    }
    if (absl::Status status = LoadRdmacm(*rdmacm, &api); !status.ok()) {
      return status;
    }
    return &api;
  }();
  return loaded;
}

absl::Status CallFailed(const char* call) {
  int err = errno;
  return FiError(err == 0 ? FI_EIO : err,
                 absl::StrCat(call, ": ", strerror(err)));
}

absl::Status MakeNonBlocking(int fd, const char* what) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return CallFailed(what);
  }
  return absl::OkStatus();
}

}  // namespace verbs
}  // namespace fabric

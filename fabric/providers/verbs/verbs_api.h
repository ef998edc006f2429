// File: fabric/providers/verbs/verbs_api.h
//
// The rdma-core calls the verbs provider makes, loaded with dlopen
// (libibverbs.so.1, librdmacm.so.1) so that the library runs, and reports
// no verbs fabric, where rdma-core is not installed. Calls that verbs.h
// defines inline (ibv_post_send, ibv_post_recv, ibv_poll_cq,
// ibv_req_notify_cq) go through the device's ops in its context and need
// nothing from here.
//
//   absl::StatusOr<const VerbsApi*> api = LoadVerbsApi();
//   if (!api.ok()) { /* FI_ENODATA: no rdma-core; the message says why */ }
//   int count = 0;
//   ibv_device** devices = (*api)->get_device_list(&count);
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_API_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_API_H_

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "absl/status/statusor.h"

namespace fabric {
namespace verbs {

struct VerbsApi {
  // libibverbs: devices, protection domains, memory regions, completion
  // queues and their channels, queue pair states.
  ibv_device** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(ibv_device**) = nullptr;
  const char* (*get_device_name)(ibv_device*) = nullptr;
  ibv_context* (*open_device)(ibv_device*) = nullptr;
  int (*close_device)(ibv_context*) = nullptr;
  int (*query_device)(ibv_context*, ibv_device_attr*) = nullptr;
  // The old entry point, for devices without the extended query (see
  // QueryPort).
  int (*query_port_compat)(ibv_context*, uint8_t,
                           _compat_ibv_port_attr*) = nullptr;
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  ibv_pd* (*alloc_pd)(ibv_context*) = nullptr;
  int (*dealloc_pd)(ibv_pd*) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int) = nullptr;
  int (*dereg_mr)(ibv_mr*) = nullptr;
  ibv_comp_channel* (*create_comp_channel)(ibv_context*) = nullptr;
  int (*destroy_comp_channel)(ibv_comp_channel*) = nullptr;
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*,
                       int) = nullptr;
  int (*destroy_cq)(ibv_cq*) = nullptr;
  ibv_srq* (*create_srq)(ibv_pd*, ibv_srq_init_attr*) = nullptr;
  int (*destroy_srq)(ibv_srq*) = nullptr;
  int (*get_cq_event)(ibv_comp_channel*, ibv_cq**, void**) = nullptr;
  void (*ack_cq_events)(ibv_cq*, unsigned int) = nullptr;
  const char* (*wc_status_str)(ibv_wc_status) = nullptr;
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;
  // Queue pairs without a connection id (UD), and the address handles
  // their sends name peers by.
  ibv_qp* (*create_queue_pair)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*destroy_queue_pair)(ibv_qp*) = nullptr;
  ibv_ah* (*create_ah)(ibv_pd*, ibv_ah_attr*) = nullptr;
  int (*destroy_ah)(ibv_ah*) = nullptr;

  // librdmacm: connection management of RC queue pairs.
  rdma_event_channel* (*create_event_channel)() = nullptr;
  void (*destroy_event_channel)(rdma_event_channel*) = nullptr;
  int (*create_id)(rdma_event_channel*, rdma_cm_id**, void*,
                   rdma_port_space) = nullptr;
  int (*destroy_id)(rdma_cm_id*) = nullptr;
  int (*bind_addr)(rdma_cm_id*, sockaddr*) = nullptr;
  int (*resolve_addr)(rdma_cm_id*, sockaddr*, sockaddr*, int) = nullptr;
  int (*resolve_route)(rdma_cm_id*, int) = nullptr;
  int (*listen)(rdma_cm_id*, int) = nullptr;
  int (*connect)(rdma_cm_id*, rdma_conn_param*) = nullptr;
  int (*accept)(rdma_cm_id*, rdma_conn_param*) = nullptr;
  int (*reject)(rdma_cm_id*, const void*, uint8_t) = nullptr;
  int (*disconnect)(rdma_cm_id*) = nullptr;
  int (*get_cm_event)(rdma_event_channel*, rdma_cm_event**) = nullptr;
  int (*ack_cm_event)(rdma_cm_event*) = nullptr;
  int (*create_qp)(rdma_cm_id*, ibv_pd*, ibv_qp_init_attr*) = nullptr;
  void (*destroy_qp)(rdma_cm_id*) = nullptr;
  int (*migrate_id)(rdma_cm_id*, rdma_event_channel*) = nullptr;
  const char* (*event_str)(rdma_cm_event_type) = nullptr;
  ibv_context** (*get_devices)(int*) = nullptr;
  void (*free_devices)(ibv_context**) = nullptr;

  // ibv_query_port as verbs.h defines it inline: the device's extended
  // query (the whole ibv_port_attr, link_layer included) when it has one,
  // else the old call.
  int QueryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) const;

  // The most inline data (at most `limit` bytes) an RC queue pair on
  // `context`'s device takes: devices say it only by accepting or refusing
  // a queue pair, so one is made with `limit`, then half, ... down to 0
  // (libfabric's verbs probes the same way). 0 when nothing can be made.
  uint32_t MaxInlineData(ibv_context* context, uint32_t limit) const;
};

// The failure of a librdmacm or libibverbs call that set errno: that errno
// as the fi_errno (FI_EIO when it is 0), with the call's name.
absl::Status CallFailed(const char* call);

// Sets O_NONBLOCK on a channel's fd (an rdma_cm event channel or a
// completion channel), which the progress engine reads without blocking.
absl::Status MakeNonBlocking(int fd, const char* what);

// Both libraries, loaded once for the process (and kept). FI_ENODATA, with
// the library or the call that is missing, when they cannot be.
absl::StatusOr<const VerbsApi*> LoadVerbsApi();

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_API_H_

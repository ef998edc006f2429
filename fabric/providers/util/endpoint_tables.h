// File: fabric/providers/util/endpoint_tables.h
//
// An endpoint's fid_ep tables set in one call, every table it does not
// offer pointing at no_ops.h's -FI_ENOSYS ones (the public headers' inline
// functions call through them unchecked); and the fi_ops_ep every endpoint
// that begins with a UtilEndpoint shares.
//
//   InstallEndpointTables(&ep->util.ep_fid,
//                         {.ops = &kMyEpOps, .cm = &kMyCmOps,
//                          .msg = &kMyMsgOps});  // no tagged, RMA, ...
#ifndef FABRIC_PROVIDERS_UTIL_ENDPOINT_TABLES_H_
#define FABRIC_PROVIDERS_UTIL_ENDPOINT_TABLES_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/types.h>

namespace fabric {

// Null members: the -FI_ENOSYS table.
struct EndpointTables {
  fi_ops_ep* ops = nullptr;
  fi_ops_cm* cm = nullptr;
  fi_ops_msg* msg = nullptr;
  fi_ops_tagged* tagged = nullptr;
  fi_ops_rma* rma = nullptr;
  fi_ops_atomic* atomic = nullptr;
  fi_ops_collective* collective = nullptr;
};

void InstallEndpointTables(fid_ep* ep, const EndpointTables& tables);

// fi_getopt and fi_setopt (GetOptUtilEndpoint, SetOptUtilEndpoint under
// the endpoint's lock) with `cancel`; no tx/rx contexts and no
// fi_rx_size_left / fi_tx_size_left (-FI_ENOSYS). For endpoints whose
// fid_ep is their UtilEndpoint's.
fi_ops_ep UtilEndpointOps(ssize_t (*cancel)(fid*, void*));

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_ENDPOINT_TABLES_H_

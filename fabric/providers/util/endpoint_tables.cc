#include "fabric/providers/util/endpoint_tables.h"

#include <mutex>

#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {
namespace {

int GetOpt(fid* object, int level, int name, void* value, size_t* len) {
  UtilEndpoint* ep = FidCast<UtilEndpoint>(object);
  MutexLock<OptionalMutex> lock(ep->mutex);
  return GetOptUtilEndpoint(ep, level, name, value, len);
}

int SetOpt(fid* object, int level, int name, const void* value, size_t len) {
  UtilEndpoint* ep = FidCast<UtilEndpoint>(object);
  MutexLock<OptionalMutex> lock(ep->mutex);
  return SetOptUtilEndpoint(ep, level, name, value, len);
}

template <typename Table>
Table* OrNone(Table* table, Table* none) {
  return table != nullptr ? table : none;
}

}  // namespace

void InstallEndpointTables(fid_ep* ep, const EndpointTables& tables) {
  ep->ops = OrNone(tables.ops, &kNoEpOps);
  ep->cm = OrNone(tables.cm, &kNoCmOps);
  ep->msg = OrNone(tables.msg, &kNoMsgOps);
  ep->tagged = OrNone(tables.tagged, &kNoTaggedOps);
  ep->rma = OrNone(tables.rma, &kNoRmaOps);
  ep->atomic = OrNone(tables.atomic, &kNoAtomicOps);
  ep->collective = OrNone(tables.collective, &kNoCollectiveOps);
}

fi_ops_ep UtilEndpointOps(ssize_t (*cancel)(fid*, void*)) {
  return {
      .size = sizeof(fi_ops_ep),
      .cancel = cancel,
      .getopt = GetOpt,
      .setopt = SetOpt,
      .tx_ctx = NoTxCtx,
      .rx_ctx = NoRxCtx,
      .rx_size_left = NoSizeLeft,
      .tx_size_left = NoSizeLeft,
  };
}

}  // namespace fabric

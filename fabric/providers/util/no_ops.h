// File: fabric/providers/util/no_ops.h
//
// Operations tables whose every entry returns -FI_ENOSYS, for the
// interfaces an endpoint does not offer. The static inline functions of the
// public headers call through these tables without checking, so an
// endpoint points every table it lacks here rather than at null.
#ifndef FABRIC_PROVIDERS_UTIL_NO_OPS_H_
#define FABRIC_PROVIDERS_UTIL_NO_OPS_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

namespace fabric {

// NoSys<decltype(&fi_ops_x::member)>: a function of that entry's type that
// returns -FI_ENOSYS.
template <typename Function>
struct NoSys;
template <typename Result, typename... Args>
struct NoSys<Result (*)(Args...)> {
  static Result Call(Args...) { return -FI_ENOSYS; }
};
#define FABRIC_NO_OP(table, member) \
  ::fabric::NoSys<decltype(table::member)>::Call

extern fi_ops_ep kNoEpOps;
extern fi_ops_cm kNoCmOps;
extern fi_ops_msg kNoMsgOps;
extern fi_ops_tagged kNoTaggedOps;
extern fi_ops_rma kNoRmaOps;
extern fi_ops_atomic kNoAtomicOps;
extern fi_ops_collective kNoCollectiveOps;

// Single entries endpoints commonly lack.
inline constexpr auto NoTxCtx = FABRIC_NO_OP(fi_ops_ep, tx_ctx);
inline constexpr auto NoRxCtx = FABRIC_NO_OP(fi_ops_ep, rx_ctx);
inline constexpr auto NoSizeLeft = FABRIC_NO_OP(fi_ops_ep, rx_size_left);
inline constexpr auto NoListen = FABRIC_NO_OP(fi_ops_cm, listen);
inline constexpr auto NoReject = FABRIC_NO_OP(fi_ops_cm, reject);
inline constexpr auto NoJoin = FABRIC_NO_OP(fi_ops_cm, join);
inline constexpr auto NoConnect = FABRIC_NO_OP(fi_ops_cm, connect);
inline constexpr auto NoAccept = FABRIC_NO_OP(fi_ops_cm, accept);
inline constexpr auto NoShutdown = FABRIC_NO_OP(fi_ops_cm, shutdown);
inline constexpr auto NoGetPeer = FABRIC_NO_OP(fi_ops_cm, getpeer);

// Connection management tables by kind of endpoint: the entries that kind
// has are the caller's; the rest return -FI_ENOSYS. constexpr, so that the
// providers' tables built from them are constant-initialized.
// A connectionless endpoint: getname and setname.
constexpr fi_ops_cm ConnectionlessCmOps(int (*setname)(fid*, void*, size_t),
                                        int (*getname)(fid*, void*, size_t*)) {
  return {
      .size = sizeof(fi_ops_cm),
      .setname = setname,
      .getname = getname,
      .getpeer = NoGetPeer,
      .connect = NoConnect,
      .listen = NoListen,
      .accept = NoAccept,
      .reject = NoReject,
      .shutdown = NoShutdown,
      .join = NoJoin,
  };
}
// A passive endpoint: those, listen and reject.
constexpr fi_ops_cm PassiveCmOps(int (*setname)(fid*, void*, size_t),
                                 int (*getname)(fid*, void*, size_t*),
                                 int (*listen)(fid_pep*),
                                 int (*reject)(fid_pep*, fid_t, const void*,
                                               size_t)) {
  fi_ops_cm ops = ConnectionlessCmOps(setname, getname);
  ops.listen = listen;
  ops.reject = reject;
  return ops;
}
// A connected endpoint (FI_EP_MSG): everything but listen, reject and join.
struct ConnectedCm {
  int (*setname)(fid*, void*, size_t);
  int (*getname)(fid*, void*, size_t*);
  int (*getpeer)(fid_ep*, void*, size_t*);
  int (*connect)(fid_ep*, const void*, const void*, size_t);
  int (*accept)(fid_ep*, const void*, size_t);
  int (*shutdown)(fid_ep*, uint64_t);
};
constexpr fi_ops_cm ConnectedCmOps(const ConnectedCm& calls) {
  fi_ops_cm ops = ConnectionlessCmOps(calls.setname, calls.getname);
  ops.getpeer = calls.getpeer;
  ops.connect = calls.connect;
  ops.accept = calls.accept;
  ops.shutdown = calls.shutdown;
  return ops;
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_NO_OPS_H_

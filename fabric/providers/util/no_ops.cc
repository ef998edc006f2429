#include "fabric/providers/util/no_ops.h"

namespace fabric {

#define NO(table, member) FABRIC_NO_OP(table, member)

fi_ops_ep kNoEpOps = {
    sizeof(fi_ops_ep),        NO(fi_ops_ep, cancel), NO(fi_ops_ep, getopt),
    NO(fi_ops_ep, setopt),    NoTxCtx,               NoRxCtx,
    NoSizeLeft,               NoSizeLeft,
};

fi_ops_msg kNoMsgOps = {
    sizeof(fi_ops_msg),       NO(fi_ops_msg, recv),    NO(fi_ops_msg, recvv),
    NO(fi_ops_msg, recvmsg),  NO(fi_ops_msg, send),    NO(fi_ops_msg, sendv),
    NO(fi_ops_msg, sendmsg),  NO(fi_ops_msg, inject),  NO(fi_ops_msg, senddata),
    NO(fi_ops_msg, injectdata),
};

fi_ops_tagged kNoTaggedOps = {
    sizeof(fi_ops_tagged),       NO(fi_ops_tagged, recv),
    NO(fi_ops_tagged, recvv),    NO(fi_ops_tagged, recvmsg),
    NO(fi_ops_tagged, send),     NO(fi_ops_tagged, sendv),
    NO(fi_ops_tagged, sendmsg),  NO(fi_ops_tagged, inject),
    NO(fi_ops_tagged, senddata), NO(fi_ops_tagged, injectdata),
};

fi_ops_rma kNoRmaOps = {
    sizeof(fi_ops_rma),        NO(fi_ops_rma, read),   NO(fi_ops_rma, readv),
    NO(fi_ops_rma, readmsg),   NO(fi_ops_rma, write),  NO(fi_ops_rma, writev),
    NO(fi_ops_rma, writemsg),  NO(fi_ops_rma, inject), NO(fi_ops_rma, writedata),
    NO(fi_ops_rma, injectdata),
};

fi_ops_atomic kNoAtomicOps = {
    sizeof(fi_ops_atomic),
    NO(fi_ops_atomic, write),
    NO(fi_ops_atomic, writev),
    NO(fi_ops_atomic, writemsg),
    NO(fi_ops_atomic, inject),
    NO(fi_ops_atomic, readwrite),
    NO(fi_ops_atomic, readwritev),
    NO(fi_ops_atomic, readwritemsg),
    NO(fi_ops_atomic, compwrite),
    NO(fi_ops_atomic, compwritev),
    NO(fi_ops_atomic, compwritemsg),
    NO(fi_ops_atomic, writevalid),
    NO(fi_ops_atomic, readwritevalid),
    NO(fi_ops_atomic, compwritevalid),
};

fi_ops_collective kNoCollectiveOps = {
    sizeof(fi_ops_collective),
    NO(fi_ops_collective, barrier),
    NO(fi_ops_collective, broadcast),
    NO(fi_ops_collective, alltoall),
    NO(fi_ops_collective, allreduce),
    NO(fi_ops_collective, allgather),
    NO(fi_ops_collective, reduce_scatter),
    NO(fi_ops_collective, reduce),
    NO(fi_ops_collective, scatter),
    NO(fi_ops_collective, gather),
    NO(fi_ops_collective, msg),
    NO(fi_ops_collective, barrier2),
};

fi_ops_cm ConnectionlessCmOps(int (*setname)(fid*, void*, size_t),
                              int (*getname)(fid*, void*, size_t*)) {
  return {sizeof(fi_ops_cm), setname,  getname,    NoGetPeer, NoConnect,
          NoListen,          NoAccept, NoReject,   NoShutdown, NoJoin};
}

#undef NO

}  // namespace fabric

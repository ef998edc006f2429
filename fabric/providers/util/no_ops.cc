#include "fabric/providers/util/no_ops.h"

namespace fabric {

#define NO(table, member) FABRIC_NO_OP(table, member)

fi_ops_ep kNoEpOps = {
    .size = sizeof(fi_ops_ep),
    .cancel = NO(fi_ops_ep, cancel),
    .getopt = NO(fi_ops_ep, getopt),
    .setopt = NO(fi_ops_ep, setopt),
    .tx_ctx = NoTxCtx,
    .rx_ctx = NoRxCtx,
    .rx_size_left = NoSizeLeft,
    .tx_size_left = NoSizeLeft,
};

fi_ops_msg kNoMsgOps = {
    .size = sizeof(fi_ops_msg),
    .recv = NO(fi_ops_msg, recv),
    .recvv = NO(fi_ops_msg, recvv),
    .recvmsg = NO(fi_ops_msg, recvmsg),
    .send = NO(fi_ops_msg, send),
    .sendv = NO(fi_ops_msg, sendv),
    .sendmsg = NO(fi_ops_msg, sendmsg),
    .inject = NO(fi_ops_msg, inject),
    .senddata = NO(fi_ops_msg, senddata),
    .injectdata = NO(fi_ops_msg, injectdata),
};

fi_ops_tagged kNoTaggedOps = {
    .size = sizeof(fi_ops_tagged),
    .recv = NO(fi_ops_tagged, recv),
    .recvv = NO(fi_ops_tagged, recvv),
    .recvmsg = NO(fi_ops_tagged, recvmsg),
    .send = NO(fi_ops_tagged, send),
    .sendv = NO(fi_ops_tagged, sendv),
    .sendmsg = NO(fi_ops_tagged, sendmsg),
    .inject = NO(fi_ops_tagged, inject),
    .senddata = NO(fi_ops_tagged, senddata),
    .injectdata = NO(fi_ops_tagged, injectdata),
};

fi_ops_rma kNoRmaOps = {
    .size = sizeof(fi_ops_rma),
    .read = NO(fi_ops_rma, read),
    .readv = NO(fi_ops_rma, readv),
    .readmsg = NO(fi_ops_rma, readmsg),
    .write = NO(fi_ops_rma, write),
    .writev = NO(fi_ops_rma, writev),
    .writemsg = NO(fi_ops_rma, writemsg),
    .inject = NO(fi_ops_rma, inject),
    .writedata = NO(fi_ops_rma, writedata),
    .injectdata = NO(fi_ops_rma, injectdata),
};

fi_ops_atomic kNoAtomicOps = {
    .size = sizeof(fi_ops_atomic),
    .write = NO(fi_ops_atomic, write),
    .writev = NO(fi_ops_atomic, writev),
    .writemsg = NO(fi_ops_atomic, writemsg),
    .inject = NO(fi_ops_atomic, inject),
    .readwrite = NO(fi_ops_atomic, readwrite),
    .readwritev = NO(fi_ops_atomic, readwritev),
    .readwritemsg = NO(fi_ops_atomic, readwritemsg),
    .compwrite = NO(fi_ops_atomic, compwrite),
    .compwritev = NO(fi_ops_atomic, compwritev),
    .compwritemsg = NO(fi_ops_atomic, compwritemsg),
    .writevalid = NO(fi_ops_atomic, writevalid),
    .readwritevalid = NO(fi_ops_atomic, readwritevalid),
    .compwritevalid = NO(fi_ops_atomic, compwritevalid),
};

fi_ops_collective kNoCollectiveOps = {
    .size = sizeof(fi_ops_collective),
    .barrier = NO(fi_ops_collective, barrier),
    .broadcast = NO(fi_ops_collective, broadcast),
    .alltoall = NO(fi_ops_collective, alltoall),
    .allreduce = NO(fi_ops_collective, allreduce),
    .allgather = NO(fi_ops_collective, allgather),
    .reduce_scatter = NO(fi_ops_collective, reduce_scatter),
    .reduce = NO(fi_ops_collective, reduce),
    .scatter = NO(fi_ops_collective, scatter),
    .gather = NO(fi_ops_collective, gather),
    .msg = NO(fi_ops_collective, msg),
    .barrier2 = NO(fi_ops_collective, barrier2),
};

fi_ops_cm kNoCmOps =
    ConnectionlessCmOps(NO(fi_ops_cm, setname), NO(fi_ops_cm, getname));

#undef NO

}  // namespace fabric

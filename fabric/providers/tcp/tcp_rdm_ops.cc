// The transmit calls of tcp RDM endpoints: each goes through the
// endpoint's local path (tcp_local_path.h) when its destination is a peer
// on this host, else to the data path's own call. Receives, cancel and the
// rest are the data path's calls.
#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "fabric/providers/tcp/tcp_local_path.h"
#include "fabric/providers/tcp/tcp_rdm_ep.h"

namespace fabric {
namespace tcp {
namespace {

// Calls `op` of the ops table `table` on the shm endpoint that reaches
// `dest`, or `op` of `tcp_ops` on `ep` itself. When shm cannot connect to
// `dest` (no endpoint there: -FI_ECONNREFUSED; no room in /dev/shm for the
// connection: -FI_ENOSPC), nothing was sent and `dest` goes over TCP.
template <typename Ops, typename Op, typename... Args>
ssize_t Routed(fid_ep* ep, fi_addr_t dest, Ops* fid_ep::*table,
               const Ops& tcp_ops, Op Ops::*op, Args... args) {
  TcpLocalPath* local = FidCast<TcpRdmEp>(ep)->local_path.get();
  if (local != nullptr) {
    if (fid_ep* shm = local->Via(dest); shm != nullptr) {
      ssize_t rc = ((shm->*table)->*op)(shm, args...);
      if (rc != -FI_ECONNREFUSED && rc != -FI_ENOSPC) return rc;
      local->Refused(dest);
    }
  }
  return (tcp_ops.*op)(ep, args...);
}

// The destination of a *msg call; FI_ADDR_UNSPEC for a NULL msg (the data
// path's call rejects it).
template <typename Msg>
fi_addr_t DestOf(const Msg* msg) {
  return msg != nullptr ? msg->addr : FI_ADDR_UNSPEC;
}

ssize_t Send(fid_ep* ep, const void* buf, size_t len, void* desc,
             fi_addr_t dest, void* context) {
  return Routed(ep, dest, &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::send, buf, len, desc, dest, context);
}

ssize_t Sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t dest, void* context) {
  return Routed(ep, dest, &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::sendv, iov, desc, count, dest, context);
}

ssize_t Sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::sendmsg, msg, flags);
}

ssize_t Inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  return Routed(ep, dest, &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::inject, buf, len, dest);
}

ssize_t Senddata(fid_ep* ep, const void* buf, size_t len, void* desc,
                 uint64_t data, fi_addr_t dest, void* context) {
  return Routed(ep, dest, &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::senddata, buf, len, desc, data, dest, context);
}

ssize_t Injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data,
                   fi_addr_t dest) {
  return Routed(ep, dest, &fid_ep::msg, stream::kStreamMsgOps,
                &fi_ops_msg::injectdata, buf, len, data, dest);
}

ssize_t Tsend(fid_ep* ep, const void* buf, size_t len, void* desc,
              fi_addr_t dest, uint64_t tag, void* context) {
  return Routed(ep, dest, &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::send, buf, len, desc, dest, tag, context);
}

ssize_t Tsendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
               fi_addr_t dest, uint64_t tag, void* context) {
  return Routed(ep, dest, &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::sendv, iov, desc, count, dest, tag, context);
}

ssize_t Tsendmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::sendmsg, msg, flags);
}

ssize_t Tinject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest,
                uint64_t tag) {
  return Routed(ep, dest, &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::inject, buf, len, dest, tag);
}

ssize_t Tsenddata(fid_ep* ep, const void* buf, size_t len, void* desc,
                  uint64_t data, fi_addr_t dest, uint64_t tag, void* context) {
  return Routed(ep, dest, &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::senddata, buf, len, desc, data, dest, tag,
                context);
}

ssize_t Tinjectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data,
                    fi_addr_t dest, uint64_t tag) {
  return Routed(ep, dest, &fid_ep::tagged, stream::kStreamTaggedOps,
                &fi_ops_tagged::injectdata, buf, len, data, dest, tag);
}

ssize_t Read(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src,
             uint64_t addr, uint64_t key, void* context) {
  return Routed(ep, src, &fid_ep::rma, stream::kStreamRmaOps, &fi_ops_rma::read,
                buf, len, desc, src, addr, key, context);
}

ssize_t Readv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t src, uint64_t addr, uint64_t key, void* context) {
  return Routed(ep, src, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::readv, iov, desc, count, src, addr, key, context);
}

ssize_t Readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::readmsg, msg, flags);
}

ssize_t Write(fid_ep* ep, const void* buf, size_t len, void* desc,
              fi_addr_t dest, uint64_t addr, uint64_t key, void* context) {
  return Routed(ep, dest, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::write, buf, len, desc, dest, addr, key, context);
}

ssize_t Writev(fid_ep* ep, const iovec* iov, void** desc, size_t count,
               fi_addr_t dest, uint64_t addr, uint64_t key, void* context) {
  return Routed(ep, dest, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::writev, iov, desc, count, dest, addr, key,
                context);
}

ssize_t Writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::writemsg, msg, flags);
}

ssize_t InjectWrite(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest,
                    uint64_t addr, uint64_t key) {
  return Routed(ep, dest, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::inject, buf, len, dest, addr, key);
}

ssize_t Writedata(fid_ep* ep, const void* buf, size_t len, void* desc,
                  uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
                  void* context) {
  return Routed(ep, dest, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::writedata, buf, len, desc, data, dest, addr, key,
                context);
}

ssize_t InjectWritedata(fid_ep* ep, const void* buf, size_t len, uint64_t data,
                        fi_addr_t dest, uint64_t addr, uint64_t key) {
  return Routed(ep, dest, &fid_ep::rma, stream::kStreamRmaOps,
                &fi_ops_rma::injectdata, buf, len, data, dest, addr, key);
}

ssize_t AtomicWrite(fid_ep* ep, const void* buf, size_t count, void* desc,
                    fi_addr_t dest, uint64_t addr, uint64_t key,
                    fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::write, buf, count, desc, dest, addr, key,
                datatype, op, context);
}

ssize_t AtomicWritev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
                     fi_addr_t dest, uint64_t addr, uint64_t key,
                     fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::writev, iov, desc, count, dest, addr, key,
                datatype, op, context);
}

ssize_t AtomicWritemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::writemsg, msg, flags);
}

ssize_t AtomicInject(fid_ep* ep, const void* buf, size_t count, fi_addr_t dest,
                     uint64_t addr, uint64_t key, fi_datatype datatype,
                     fi_op op) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::inject, buf, count, dest, addr, key, datatype,
                op);
}

ssize_t Fetch(fid_ep* ep, const void* buf, size_t count, void* desc,
              void* result, void* result_desc, fi_addr_t dest, uint64_t addr,
              uint64_t key, fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::readwrite, buf, count, desc, result,
                result_desc, dest, addr, key, datatype, op, context);
}

ssize_t Fetchv(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
               fi_ioc* resultv, void** result_desc, size_t result_count,
               fi_addr_t dest, uint64_t addr, uint64_t key,
               fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::readwritev, iov, desc, count, resultv,
                result_desc, result_count, dest, addr, key, datatype, op,
                context);
}

ssize_t Fetchmsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv,
                 void** result_desc, size_t result_count, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::readwritemsg, msg, resultv, result_desc,
                result_count, flags);
}

ssize_t Compare(fid_ep* ep, const void* buf, size_t count, void* desc,
                const void* compare, void* compare_desc, void* result,
                void* result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::compwrite, buf, count, desc, compare,
                compare_desc, result, result_desc, dest, addr, key, datatype,
                op, context);
}

ssize_t Comparev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
                 const fi_ioc* comparev, void** compare_desc,
                 size_t compare_count, fi_ioc* resultv, void** result_desc,
                 size_t result_count, fi_addr_t dest, uint64_t addr,
                 uint64_t key, fi_datatype datatype, fi_op op, void* context) {
  return Routed(ep, dest, &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::compwritev, iov, desc, count, comparev,
                compare_desc, compare_count, resultv, result_desc, result_count,
                dest, addr, key, datatype, op, context);
}

ssize_t Comparemsg(fid_ep* ep, const fi_msg_atomic* msg, const fi_ioc* comparev,
                   void** compare_desc, size_t compare_count, fi_ioc* resultv,
                   void** result_desc, size_t result_count, uint64_t flags) {
  return Routed(ep, DestOf(msg), &fid_ep::atomic, stream::kStreamAtomicOps,
                &fi_ops_atomic::compwritemsg, msg, comparev, compare_desc,
                compare_count, resultv, result_desc, result_count, flags);
}

}  // namespace

void InstallRdmTransmitOps(fid_ep* ep) {
  static fi_ops_msg msg = [] {
    fi_ops_msg ops = stream::kStreamMsgOps;
    ops.send = Send;
    ops.sendv = Sendv;
    ops.sendmsg = Sendmsg;
    ops.inject = Inject;
    ops.senddata = Senddata;
    ops.injectdata = Injectdata;
    return ops;
  }();
  static fi_ops_tagged tagged = [] {
    fi_ops_tagged ops = stream::kStreamTaggedOps;
    ops.send = Tsend;
    ops.sendv = Tsendv;
    ops.sendmsg = Tsendmsg;
    ops.inject = Tinject;
    ops.senddata = Tsenddata;
    ops.injectdata = Tinjectdata;
    return ops;
  }();
  static fi_ops_rma rma = [] {
    fi_ops_rma ops = stream::kStreamRmaOps;
    ops.read = Read;
    ops.readv = Readv;
    ops.readmsg = Readmsg;
    ops.write = Write;
    ops.writev = Writev;
    ops.writemsg = Writemsg;
    ops.inject = InjectWrite;
    ops.writedata = Writedata;
    ops.injectdata = InjectWritedata;
    return ops;
  }();
  static fi_ops_atomic atomic = [] {
    fi_ops_atomic ops = stream::kStreamAtomicOps;
    ops.write = AtomicWrite;
    ops.writev = AtomicWritev;
    ops.writemsg = AtomicWritemsg;
    ops.inject = AtomicInject;
    ops.readwrite = Fetch;
    ops.readwritev = Fetchv;
    ops.readwritemsg = Fetchmsg;
    ops.compwrite = Compare;
    ops.compwritev = Comparev;
    ops.compwritemsg = Comparemsg;
    return ops;
  }();
  ep->msg = &msg;
  ep->tagged = &tagged;
  ep->rma = &rma;
  ep->atomic = &atomic;
}

}  // namespace tcp
}  // namespace fabric

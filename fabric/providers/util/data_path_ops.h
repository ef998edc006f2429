// File: fabric/providers/util/data_path_ops.h
//
// The fi_msg, fi_tagged and fi_rma tables of an endpoint, built from a
// provider's few functions. Every C entry point (fi_send, fi_sendv,
// fi_sendmsg, fi_inject, fi_senddata, fi_injectdata, their receive, tagged
// and RMA forms) becomes one TransmitCall or ReceiveCall here, mechanically,
// and nowhere else:
//
//   struct MyCalls {
//     static ssize_t Transmit(fid_ep*, const TransmitCall&);
//     static ssize_t Receive(fid_ep*, const ReceiveCall&);
//     static uint64_t TxFlags(fid_ep*);  // the endpoint's op_flags
//     static uint64_t RxFlags(fid_ep*);
//     static const fi_provider* Log(fid_ep*);  // for a NULL msg argument
//   };
//   fi_ops_msg kMyMsgOps = MsgOps<MyCalls>();
//
// A table of receive calls only (a shared receive context) is
// ReceiveOnlyMsgOps<MyCalls>(): its transmit entries return -FI_ENOSYS.
//
// Calls that another endpoint may carry instead (stream/divert.h) also
// define
//   static constexpr bool kMayDivert = true;
//   template <typename Ops, typename Op, typename... Args>
//   static std::optional<ssize_t> Divert(fid_ep*, fi_addr_t dest,
//                                        Ops* fid_ep::*table, Op Ops::*op,
//                                        Args... args);
// which every transmit entry asks first, with the call's own arguments.
#ifndef FABRIC_PROVIDERS_UTIL_DATA_PATH_OPS_H_
#define FABRIC_PROVIDERS_UTIL_DATA_PATH_OPS_H_

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "fabric/providers/util/log_failure.h"
#include "fabric/providers/util/no_ops.h"

namespace fabric {

// A transmit as the application's call gave it.
struct TransmitCall {
  enum class Kind : uint8_t { kMsg, kTagged, kRead, kWrite };
  Kind kind;
  const char* name;  // "fi_send", ...: for the log
  const iovec* iov;
  void** desc;
  size_t count;
  fi_addr_t dest;
  const fi_rma_iov* rma = nullptr;  // kRead and kWrite: the remote side
  size_t rma_count = 0;
  uint64_t data = 0;
  uint64_t tag = 0;
  void* context = nullptr;
  // The call's flags (the *msg calls) or the endpoint's op_flags, with
  // FI_REMOTE_CQ_DATA for the *data calls and FI_INJECT for the inject ones.
  uint64_t flags = 0;
  bool msg_call = false;     // fi_sendmsg & co.: flags are the caller's
  bool inject_call = false;  // fi_inject & co.: no completion entry
  bool data_call = false;    // fi_senddata & co.: `data` is the caller's
};

// A receive as the application's call gave it.
struct ReceiveCall {
  const char* name;
  const iovec* iov;
  void** desc;
  size_t count;
  fi_addr_t source;
  uint64_t tag = 0;
  uint64_t ignore = 0;
  void* context = nullptr;
  uint64_t flags = 0;
  bool tagged = false;
  bool msg_call = false;
};

// The bytes of the `count` pieces at `iov` (0 when iov is null).
inline size_t TotalLength(const iovec* iov, size_t count) {
  size_t total = 0;
  for (size_t i = 0; iov != nullptr && i < count; ++i) {
    total += iov[i].iov_len;
  }
  return total;
}

namespace data_path_internal {

template <typename Calls, typename = void>
struct MayDivert : std::false_type {};
template <typename Calls>
struct MayDivert<Calls, std::void_t<decltype(Calls::kMayDivert)>>
    : std::bool_constant<Calls::kMayDivert> {};

// The divert's answer to the call `op` of `table`, or nullopt.
template <typename Calls, typename Ops, typename Op, typename... Args>
std::optional<ssize_t> Diverted(fid_ep* ep, fi_addr_t dest, Ops* fid_ep::*table,
                                Op Ops::*op, Args... args) {
  if constexpr (MayDivert<Calls>::value) {
    return Calls::Divert(ep, dest, table, op, args...);
  } else {
    return std::nullopt;
  }
}

template <typename Msg>
fi_addr_t DestOf(const Msg* msg) {
  return msg != nullptr ? msg->addr : FI_ADDR_UNSPEC;
}

template <typename Calls>
ssize_t NullMsg(fid_ep* ep, const char* name) {
  return LogFailure(Calls::Log(ep), FI_LOG_EP_DATA, FI_EINVAL,
                    std::string(name) + ": msg is NULL");
}

// The refusal of an RMA or atomic *msg call whose msg is NULL or counts
// remote pieces without their list; 0 when neither.
template <typename Calls, typename Msg>
ssize_t CheckRemoteMsg(fid_ep* ep, const Msg* msg, const char* name) {
  if (msg == nullptr) return NullMsg<Calls>(ep, name);
  if (msg->rma_iov == nullptr && msg->rma_iov_count > 0) {
    return LogFailure(Calls::Log(ep), FI_LOG_EP_DATA, FI_EINVAL,
                      std::string(name) + ": rma_iov is NULL");
  }
  return 0;
}

using Kind = TransmitCall::Kind;

// The entry points, one static function each.
template <typename Calls>
struct Entries {
  // --- receives (fi_msg and fi_tagged) ---
  static ssize_t Recv(fid_ep* ep, void* buf, size_t len, void* desc,
                      fi_addr_t src, void* context) {
    iovec iov = {buf, len};
    return Calls::Receive(ep, {"fi_recv", &iov, &desc, 1, src, 0, 0, context,
                               Calls::RxFlags(ep)});
  }
  static ssize_t Recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                       fi_addr_t src, void* context) {
    return Calls::Receive(ep, {"fi_recvv", iov, desc, count, src, 0, 0, context,
                               Calls::RxFlags(ep)});
  }
  static ssize_t Recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
    if (msg == nullptr) return NullMsg<Calls>(ep, "fi_recvmsg");
    return Calls::Receive(
        ep, {"fi_recvmsg", msg->msg_iov, msg->desc, msg->iov_count, msg->addr,
             0, 0, msg->context, flags, false, true});
  }
  static ssize_t Trecv(fid_ep* ep, void* buf, size_t len, void* desc,
                       fi_addr_t src, uint64_t tag, uint64_t ignore,
                       void* context) {
    iovec iov = {buf, len};
    return Calls::Receive(ep, {"fi_trecv", &iov, &desc, 1, src, tag, ignore,
                               context, Calls::RxFlags(ep), true});
  }
  static ssize_t Trecvv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                        fi_addr_t src, uint64_t tag, uint64_t ignore,
                        void* context) {
    return Calls::Receive(ep, {"fi_trecvv", iov, desc, count, src, tag, ignore,
                               context, Calls::RxFlags(ep), true});
  }
  static ssize_t Trecvmsg(fid_ep* ep, const fi_msg_tagged* msg,
                          uint64_t flags) {
    if (msg == nullptr) return NullMsg<Calls>(ep, "fi_trecvmsg");
    return Calls::Receive(
        ep, {"fi_trecvmsg", msg->msg_iov, msg->desc, msg->iov_count, msg->addr,
             msg->tag, msg->ignore, msg->context, flags, true, true});
  }

  // --- fi_msg transmits ---
  static ssize_t Send(fid_ep* ep, const void* buf, size_t len, void* desc,
                      fi_addr_t dest, void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::msg, &fi_ops_msg::send,
                                  buf, len, desc, dest, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(ep, {Kind::kMsg, "fi_send", &iov, &desc, 1, dest,
                                nullptr, 0, 0, 0, context, Calls::TxFlags(ep)});
  }
  static ssize_t Sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                       fi_addr_t dest, void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::msg, &fi_ops_msg::sendv,
                                  iov, desc, count, dest, context)) {
      return *rc;
    }
    return Calls::Transmit(ep, {Kind::kMsg, "fi_sendv", iov, desc, count, dest,
                                nullptr, 0, 0, 0, context, Calls::TxFlags(ep)});
  }
  static ssize_t Sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::msg,
                                  &fi_ops_msg::sendmsg, msg, flags)) {
      return *rc;
    }
    if (msg == nullptr) return NullMsg<Calls>(ep, "fi_sendmsg");
    return Calls::Transmit(
        ep, {Kind::kMsg, "fi_sendmsg", msg->msg_iov, msg->desc, msg->iov_count,
             msg->addr, nullptr, 0, msg->data, 0, msg->context, flags, true});
  }
  static ssize_t Inject(fid_ep* ep, const void* buf, size_t len,
                        fi_addr_t dest) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::msg, &fi_ops_msg::inject,
                                  buf, len, dest)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep, {Kind::kMsg, "fi_inject", &iov, nullptr, 1, dest, nullptr, 0, 0, 0,
             nullptr, FI_INJECT, false, true});
  }
  static ssize_t Senddata(fid_ep* ep, const void* buf, size_t len, void* desc,
                          uint64_t data, fi_addr_t dest, void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::msg, &fi_ops_msg::senddata,
                                  buf, len, desc, data, dest, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep,
        {Kind::kMsg, "fi_senddata", &iov, &desc, 1, dest, nullptr, 0, data, 0,
         context, Calls::TxFlags(ep) | FI_REMOTE_CQ_DATA, false, false, true});
  }
  static ssize_t Injectdata(fid_ep* ep, const void* buf, size_t len,
                            uint64_t data, fi_addr_t dest) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::msg, &fi_ops_msg::injectdata,
                            buf, len, data, dest)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep,
        {Kind::kMsg, "fi_injectdata", &iov, nullptr, 1, dest, nullptr, 0, data,
         0, nullptr, FI_INJECT | FI_REMOTE_CQ_DATA, false, true, true});
  }

  // --- fi_tagged transmits ---
  static ssize_t Tsend(fid_ep* ep, const void* buf, size_t len, void* desc,
                       fi_addr_t dest, uint64_t tag, void* context) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::tagged, &fi_ops_tagged::send,
                            buf, len, desc, dest, tag, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep, {Kind::kTagged, "fi_tsend", &iov, &desc, 1, dest, nullptr, 0, 0,
             tag, context, Calls::TxFlags(ep)});
  }
  static ssize_t Tsendv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                        fi_addr_t dest, uint64_t tag, void* context) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::tagged, &fi_ops_tagged::sendv,
                            iov, desc, count, dest, tag, context)) {
      return *rc;
    }
    return Calls::Transmit(
        ep, {Kind::kTagged, "fi_tsendv", iov, desc, count, dest, nullptr, 0, 0,
             tag, context, Calls::TxFlags(ep)});
  }
  static ssize_t Tsendmsg(fid_ep* ep, const fi_msg_tagged* msg,
                          uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::tagged,
                                  &fi_ops_tagged::sendmsg, msg, flags)) {
      return *rc;
    }
    if (msg == nullptr) return NullMsg<Calls>(ep, "fi_tsendmsg");
    return Calls::Transmit(
        ep, {Kind::kTagged, "fi_tsendmsg", msg->msg_iov, msg->desc,
             msg->iov_count, msg->addr, nullptr, 0, msg->data, msg->tag,
             msg->context, flags, true});
  }
  static ssize_t Tinject(fid_ep* ep, const void* buf, size_t len,
                         fi_addr_t dest, uint64_t tag) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::tagged, &fi_ops_tagged::inject,
                            buf, len, dest, tag)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep, {Kind::kTagged, "fi_tinject", &iov, nullptr, 1, dest, nullptr, 0, 0,
             tag, nullptr, FI_INJECT, false, true});
  }
  static ssize_t Tsenddata(fid_ep* ep, const void* buf, size_t len, void* desc,
                           uint64_t data, fi_addr_t dest, uint64_t tag,
                           void* context) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::tagged, &fi_ops_tagged::senddata,
                            buf, len, desc, data, dest, tag, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep, {Kind::kTagged, "fi_tsenddata", &iov, &desc, 1, dest, nullptr, 0,
             data, tag, context, Calls::TxFlags(ep) | FI_REMOTE_CQ_DATA, false,
             false, true});
  }
  static ssize_t Tinjectdata(fid_ep* ep, const void* buf, size_t len,
                             uint64_t data, fi_addr_t dest, uint64_t tag) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::tagged,
                                  &fi_ops_tagged::injectdata, buf, len, data,
                                  dest, tag)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    return Calls::Transmit(
        ep,
        {Kind::kTagged, "fi_tinjectdata", &iov, nullptr, 1, dest, nullptr, 0,
         data, tag, nullptr, FI_INJECT | FI_REMOTE_CQ_DATA, false, true, true});
  }

  // --- fi_rma ---
  // The one-address calls name one remote piece as long as the local ones.
  static ssize_t Read(fid_ep* ep, void* buf, size_t len, void* desc,
                      fi_addr_t src, uint64_t addr, uint64_t key,
                      void* context) {
    if (auto rc = Diverted<Calls>(ep, src, &fid_ep::rma, &fi_ops_rma::read, buf,
                                  len, desc, src, addr, key, context)) {
      return *rc;
    }
    iovec iov = {buf, len};
    fi_rma_iov rma = {addr, len, key};
    return Calls::Transmit(ep, {Kind::kRead, "fi_read", &iov, &desc, 1, src,
                                &rma, 1, 0, 0, context, Calls::TxFlags(ep)});
  }
  static ssize_t Readv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                       fi_addr_t src, uint64_t addr, uint64_t key,
                       void* context) {
    if (auto rc = Diverted<Calls>(ep, src, &fid_ep::rma, &fi_ops_rma::readv,
                                  iov, desc, count, src, addr, key, context)) {
      return *rc;
    }
    fi_rma_iov rma = {addr, TotalLength(iov, count), key};
    return Calls::Transmit(ep, {Kind::kRead, "fi_readv", iov, desc, count, src,
                                &rma, 1, 0, 0, context, Calls::TxFlags(ep)});
  }
  static ssize_t Readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::rma,
                                  &fi_ops_rma::readmsg, msg, flags)) {
      return *rc;
    }
    if (ssize_t rc = CheckRemoteMsg<Calls>(ep, msg, "fi_readmsg"); rc != 0) {
      return rc;
    }
    return Calls::Transmit(
        ep, {Kind::kRead, "fi_readmsg", msg->msg_iov, msg->desc, msg->iov_count,
             msg->addr, msg->rma_iov, msg->rma_iov_count, msg->data, 0,
             msg->context, flags, true});
  }
  static ssize_t Write(fid_ep* ep, const void* buf, size_t len, void* desc,
                       fi_addr_t dest, uint64_t addr, uint64_t key,
                       void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::rma, &fi_ops_rma::write,
                                  buf, len, desc, dest, addr, key, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    fi_rma_iov rma = {addr, len, key};
    return Calls::Transmit(ep, {Kind::kWrite, "fi_write", &iov, &desc, 1, dest,
                                &rma, 1, 0, 0, context, Calls::TxFlags(ep)});
  }
  static ssize_t Writev(fid_ep* ep, const iovec* iov, void** desc, size_t count,
                        fi_addr_t dest, uint64_t addr, uint64_t key,
                        void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::rma, &fi_ops_rma::writev,
                                  iov, desc, count, dest, addr, key, context)) {
      return *rc;
    }
    fi_rma_iov rma = {addr, TotalLength(iov, count), key};
    return Calls::Transmit(
        ep, {Kind::kWrite, "fi_writev", iov, desc, count, dest, &rma, 1, 0, 0,
             context, Calls::TxFlags(ep)});
  }
  static ssize_t Writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::rma,
                                  &fi_ops_rma::writemsg, msg, flags)) {
      return *rc;
    }
    if (ssize_t rc = CheckRemoteMsg<Calls>(ep, msg, "fi_writemsg"); rc != 0) {
      return rc;
    }
    return Calls::Transmit(
        ep, {Kind::kWrite, "fi_writemsg", msg->msg_iov, msg->desc,
             msg->iov_count, msg->addr, msg->rma_iov, msg->rma_iov_count,
             msg->data, 0, msg->context, flags, true});
  }
  static ssize_t InjectWrite(fid_ep* ep, const void* buf, size_t len,
                             fi_addr_t dest, uint64_t addr, uint64_t key) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::rma, &fi_ops_rma::inject,
                                  buf, len, dest, addr, key)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    fi_rma_iov rma = {addr, len, key};
    return Calls::Transmit(
        ep, {Kind::kWrite, "fi_inject_write", &iov, nullptr, 1, dest, &rma, 1,
             0, 0, nullptr, FI_INJECT, false, true});
  }
  static ssize_t Writedata(fid_ep* ep, const void* buf, size_t len, void* desc,
                           uint64_t data, fi_addr_t dest, uint64_t addr,
                           uint64_t key, void* context) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::rma, &fi_ops_rma::writedata, buf,
                            len, desc, data, dest, addr, key, context)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    fi_rma_iov rma = {addr, len, key};
    return Calls::Transmit(
        ep,
        {Kind::kWrite, "fi_writedata", &iov, &desc, 1, dest, &rma, 1, data, 0,
         context, Calls::TxFlags(ep) | FI_REMOTE_CQ_DATA, false, false, true});
  }
  static ssize_t InjectWritedata(fid_ep* ep, const void* buf, size_t len,
                                 uint64_t data, fi_addr_t dest, uint64_t addr,
                                 uint64_t key) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::rma, &fi_ops_rma::injectdata,
                            buf, len, data, dest, addr, key)) {
      return *rc;
    }
    iovec iov = {const_cast<void*>(buf), len};
    fi_rma_iov rma = {addr, len, key};
    return Calls::Transmit(
        ep,
        {Kind::kWrite, "fi_inject_writedata", &iov, nullptr, 1, dest, &rma, 1,
         data, 0, nullptr, FI_INJECT | FI_REMOTE_CQ_DATA, false, true, true});
  }
};

}  // namespace data_path_internal

template <typename Calls>
constexpr fi_ops_msg MsgOps() {
  using E = data_path_internal::Entries<Calls>;
  return {
      .size = sizeof(fi_ops_msg),
      .recv = E::Recv,
      .recvv = E::Recvv,
      .recvmsg = E::Recvmsg,
      .send = E::Send,
      .sendv = E::Sendv,
      .sendmsg = E::Sendmsg,
      .inject = E::Inject,
      .senddata = E::Senddata,
      .injectdata = E::Injectdata,
  };
}

template <typename Calls>
constexpr fi_ops_tagged TaggedOps() {
  using E = data_path_internal::Entries<Calls>;
  return {
      .size = sizeof(fi_ops_tagged),
      .recv = E::Trecv,
      .recvv = E::Trecvv,
      .recvmsg = E::Trecvmsg,
      .send = E::Tsend,
      .sendv = E::Tsendv,
      .sendmsg = E::Tsendmsg,
      .inject = E::Tinject,
      .senddata = E::Tsenddata,
      .injectdata = E::Tinjectdata,
  };
}

template <typename Calls>
constexpr fi_ops_rma RmaOps() {
  using E = data_path_internal::Entries<Calls>;
  return {
      .size = sizeof(fi_ops_rma),
      .read = E::Read,
      .readv = E::Readv,
      .readmsg = E::Readmsg,
      .write = E::Write,
      .writev = E::Writev,
      .writemsg = E::Writemsg,
      .inject = E::InjectWrite,
      .writedata = E::Writedata,
      .injectdata = E::InjectWritedata,
  };
}

// The receive entries of MsgOps / TaggedOps; the transmit ones return
// -FI_ENOSYS (Calls needs no Transmit or TxFlags).
template <typename Calls>
constexpr fi_ops_msg ReceiveOnlyMsgOps() {
  using E = data_path_internal::Entries<Calls>;
  return {
      .size = sizeof(fi_ops_msg),
      .recv = E::Recv,
      .recvv = E::Recvv,
      .recvmsg = E::Recvmsg,
      .send = FABRIC_NO_OP(fi_ops_msg, send),
      .sendv = FABRIC_NO_OP(fi_ops_msg, sendv),
      .sendmsg = FABRIC_NO_OP(fi_ops_msg, sendmsg),
      .inject = FABRIC_NO_OP(fi_ops_msg, inject),
      .senddata = FABRIC_NO_OP(fi_ops_msg, senddata),
      .injectdata = FABRIC_NO_OP(fi_ops_msg, injectdata),
  };
}

template <typename Calls>
constexpr fi_ops_tagged ReceiveOnlyTaggedOps() {
  using E = data_path_internal::Entries<Calls>;
  return {
      .size = sizeof(fi_ops_tagged),
      .recv = E::Trecv,
      .recvv = E::Trecvv,
      .recvmsg = E::Trecvmsg,
      .send = FABRIC_NO_OP(fi_ops_tagged, send),
      .sendv = FABRIC_NO_OP(fi_ops_tagged, sendv),
      .sendmsg = FABRIC_NO_OP(fi_ops_tagged, sendmsg),
      .inject = FABRIC_NO_OP(fi_ops_tagged, inject),
      .senddata = FABRIC_NO_OP(fi_ops_tagged, senddata),
      .injectdata = FABRIC_NO_OP(fi_ops_tagged, injectdata),
  };
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_DATA_PATH_OPS_H_

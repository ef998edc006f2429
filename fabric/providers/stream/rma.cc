// The fi_rma calls of stream endpoints: each becomes a request posted on a
// link (post.h), unless another endpoint carries its destination
// (divert.h).
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <optional>

#include "fabric/providers/stream/divert.h"
#include "fabric/providers/stream/post.h"
#include "fabric/providers/stream/stream_ep.h"

namespace fabric {
namespace stream {
namespace {

ssize_t Read(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t peer,
             uint64_t addr, uint64_t key, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::read, buf, len, desc,
                   peer, addr, key, context)) {
    return *rc;
  }
  iovec iov = {buf, len};
  fi_rma_iov rma = {addr, len, key};
  return Transmit(
      ep, peer,
      {Op::kReadRequest, &iov, &desc, 1, &rma, 1, 0, 0, context, TxFlags(ep)});
}
ssize_t Readv(fid_ep* ep, const iovec* iov, void** desc, size_t count,
              fi_addr_t peer, uint64_t addr, uint64_t key, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::readv, iov, desc, count,
                   peer, addr, key, context)) {
    return *rc;
  }
  size_t total = 0;
  for (size_t i = 0; iov != nullptr && i < count; ++i) total += iov[i].iov_len;
  fi_rma_iov rma = {addr, total, key};
  return Transmit(ep, peer,
                  {Op::kReadRequest, iov, desc, count, &rma, 1, 0, 0, context,
                   TxFlags(ep)});
}
ssize_t Readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  if (std::optional<ssize_t> rc = Diverted(ep, DestOf(msg), &fid_ep::rma,
                                           &fi_ops_rma::readmsg, msg, flags)) {
    return *rc;
  }
  if (msg == nullptr) return -FI_EINVAL;
  return Transmit(
      ep, msg->addr,
      {Op::kReadRequest, msg->msg_iov, msg->desc, msg->iov_count, msg->rma_iov,
       msg->rma_iov_count, msg->data, 0, msg->context, flags});
}
ssize_t Write(fid_ep* ep, const void* buf, size_t len, void* desc,
              fi_addr_t peer, uint64_t addr, uint64_t key, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::write, buf, len, desc,
                   peer, addr, key, context)) {
    return *rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  fi_rma_iov rma = {addr, len, key};
  return Transmit(
      ep, peer,
      {Op::kWrite, &iov, &desc, 1, &rma, 1, 0, 0, context, TxFlags(ep)});
}
ssize_t Writev(fid_ep* ep, const iovec* iov, void** desc, size_t count,
               fi_addr_t peer, uint64_t addr, uint64_t key, void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::writev, iov, desc,
                   count, peer, addr, key, context)) {
    return *rc;
  }
  size_t total = 0;
  for (size_t i = 0; iov != nullptr && i < count; ++i) total += iov[i].iov_len;
  fi_rma_iov rma = {addr, total, key};
  return Transmit(
      ep, peer,
      {Op::kWrite, iov, desc, count, &rma, 1, 0, 0, context, TxFlags(ep)});
}
ssize_t Writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  if (std::optional<ssize_t> rc = Diverted(ep, DestOf(msg), &fid_ep::rma,
                                           &fi_ops_rma::writemsg, msg, flags)) {
    return *rc;
  }
  if (msg == nullptr) return -FI_EINVAL;
  return Transmit(
      ep, msg->addr,
      {Op::kWrite, msg->msg_iov, msg->desc, msg->iov_count, msg->rma_iov,
       msg->rma_iov_count, msg->data, 0, msg->context, flags});
}
ssize_t InjectWrite(fid_ep* ep, const void* buf, size_t len, fi_addr_t peer,
                    uint64_t addr, uint64_t key) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::inject, buf, len, peer,
                   addr, key)) {
    return *rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  fi_rma_iov rma = {addr, len, key};
  return Transmit(
      ep, peer,
      {Op::kWrite, &iov, nullptr, 1, &rma, 1, 0, 0, nullptr, FI_INJECT, true});
}
ssize_t Writedata(fid_ep* ep, const void* buf, size_t len, void* desc,
                  uint64_t data, fi_addr_t peer, uint64_t addr, uint64_t key,
                  void* context) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::writedata, buf, len,
                   desc, data, peer, addr, key, context)) {
    return *rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  fi_rma_iov rma = {addr, len, key};
  return Transmit(ep, peer,
                  {Op::kWrite, &iov, &desc, 1, &rma, 1, data, 0, context,
                   TxFlags(ep) | FI_REMOTE_CQ_DATA});
}
ssize_t InjectWritedata(fid_ep* ep, const void* buf, size_t len, uint64_t data,
                        fi_addr_t peer, uint64_t addr, uint64_t key) {
  if (std::optional<ssize_t> rc =
          Diverted(ep, peer, &fid_ep::rma, &fi_ops_rma::injectdata, buf, len,
                   data, peer, addr, key)) {
    return *rc;
  }
  iovec iov = {const_cast<void*>(buf), len};
  fi_rma_iov rma = {addr, len, key};
  return Transmit(ep, peer,
                  {Op::kWrite, &iov, nullptr, 1, &rma, 1, data, 0, nullptr,
                   FI_INJECT | FI_REMOTE_CQ_DATA, true});
}

}  // namespace

fi_ops_rma kStreamRmaOps = {
    .size = sizeof(fi_ops_rma),
    .read = Read,
    .readv = Readv,
    .readmsg = Readmsg,
    .write = Write,
    .writev = Writev,
    .writemsg = Writemsg,
    .inject = InjectWrite,
    .writedata = Writedata,
    .injectdata = InjectWritedata,
};

}  // namespace stream
}  // namespace fabric

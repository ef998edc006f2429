#include "fabric/providers/util/endpoint.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fid_ops.h"

namespace fabric {
namespace {

constexpr uint64_t kCqBindFlags =
    FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION;
constexpr uint64_t kCntrBindFlags = FI_SEND | FI_RECV | FI_READ | FI_WRITE |
                                    FI_REMOTE_READ | FI_REMOTE_WRITE;

const fi_provider* Log(const UtilEndpoint& ep) {
  return ep.domain->fabric->provider->c_provider();
}

int Fail(const UtilEndpoint& ep, int fi_errno, const std::string& what) {
  FI_WARN(Log(ep), FI_LOG_EP_CTRL, "%s\n", what.c_str());
  return -fi_errno;
}

int BindCq(UtilEndpoint* ep, UtilCq* cq, uint64_t flags) {
  if ((flags & ~kCqBindFlags) != 0 || (flags & (FI_TRANSMIT | FI_RECV)) == 0) {
    return Fail(*ep, FI_EBADFLAGS,
                "fi_ep_bind: a CQ takes FI_TRANSMIT and/or FI_RECV "
                "(and FI_SELECTIVE_COMPLETION)");
  }
  if (((flags & FI_TRANSMIT) && ep->tx_cq != nullptr) ||
      ((flags & FI_RECV) && ep->rx_cq != nullptr)) {
    return Fail(*ep, FI_EINVAL, "fi_ep_bind: a CQ is already bound there");
  }
  bool selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
  if (flags & FI_TRANSMIT) {
    ep->tx_cq = cq;
    ep->tx_selective = selective;
    cq->open_children.fetch_add(1);
  }
  if (flags & FI_RECV) {
    ep->rx_cq = cq;
    ep->rx_selective = selective;
    cq->open_children.fetch_add(1);
  }
  return 0;
}

int BindCntr(UtilEndpoint* ep, UtilCntr* cntr, uint64_t flags) {
  if (flags == 0 || (flags & ~kCntrBindFlags) != 0) {
    return Fail(*ep, FI_EBADFLAGS,
                "fi_ep_bind: a counter takes FI_SEND, FI_RECV, FI_READ, "
                "FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE");
  }
  for (int kind = 0; kind < kCntrKinds; ++kind) {
    if ((flags & kCntrBindFlag[kind]) && ep->cntrs[kind] != nullptr) {
      return Fail(*ep, FI_EINVAL,
                  "fi_ep_bind: a counter is already bound for that event");
    }
  }
  for (int kind = 0; kind < kCntrKinds; ++kind) {
    if (flags & kCntrBindFlag[kind]) {
      ep->cntrs[kind] = cntr;
      cntr->open_children.fetch_add(1);
    }
  }
  return 0;
}

void WriteErrorEntry(UtilCq* cq, bool reserved,
                     const fi_cq_tagged_entry& entry, int err, size_t olen) {
  fi_cq_err_entry error = ErrorEntryOf(entry, err, olen);
  error.prov_errno = err;
  CqWriteError(cq, error, reserved);
}

}  // namespace

fi_cq_err_entry ErrorEntryOf(const fi_cq_tagged_entry& entry, int err,
                             size_t olen) {
  fi_cq_err_entry error = {};
  error.op_context = entry.op_context;
  error.flags = entry.flags;
  error.len = entry.len;
  error.buf = entry.buf;
  error.data = entry.data;
  error.tag = entry.tag;
  error.olen = olen;
  error.err = err;
  return error;
}

absl::Status InitUtilEndpoint(UtilEndpoint* ep, UtilDomain* domain,
                              const fi_info* info, void* context,
                              fi_ops* fid_ops) {
  if (info == nullptr || info->ep_attr == nullptr) {
    return FiError(FI_EINVAL, "fi_endpoint: info and info->ep_attr needed");
  }
  size_t limit = domain->info->domain_attr->ep_cnt;
  if (domain->ep_count.fetch_add(1) >= limit) {
    domain->ep_count.fetch_sub(1);
    return FiError(FI_ENOSPC, absl::StrCat("fi_endpoint: the domain's ep_cnt (",
                                           limit, ") endpoints are open"));
  }
  InfoPtr copy = DupInfo(*info);
  if (copy == nullptr) {
    domain->ep_count.fetch_sub(1);
    return FiError(FI_ENOMEM, "fi_endpoint: no memory");
  }
  InitFid(&ep->ep_fid.fid, FI_CLASS_EP, context, fid_ops);
  ep->domain = domain;
  ep->info = std::move(copy);
  ep->auth_key = AuthKeyOf(*ep->info);
  ep->tx_op_flags = info->tx_attr != nullptr ? info->tx_attr->op_flags : 0;
  ep->rx_op_flags = info->rx_attr != nullptr ? info->rx_attr->op_flags : 0;
  ep->mutex.set_needed(!AppSerializesDomain(*domain->info->domain_attr));
  domain->open_children.fetch_add(1);
  return absl::OkStatus();
}

void ReleaseUtilEndpoint(UtilEndpoint* ep) {
  if (ep->eq != nullptr) {
    if (ep->mutex.needed()) {
      ep->eq->wait->RemoveEngine(ep->domain->progress.get());
    }
    ep->eq->open_children.fetch_sub(1);
  }
  if (ep->av != nullptr) ep->av->open_children.fetch_sub(1);
  if (ep->tx_cq != nullptr) ep->tx_cq->open_children.fetch_sub(1);
  if (ep->rx_cq != nullptr) ep->rx_cq->open_children.fetch_sub(1);
  for (UtilCntr* cntr : ep->cntrs) {
    if (cntr != nullptr) cntr->open_children.fetch_sub(1);
  }
  ep->domain->ep_count.fetch_sub(1);
  ep->domain->open_children.fetch_sub(1);
}

int BindUtilEndpoint(UtilEndpoint* ep, fid* bound, uint64_t flags) {
  if (bound == nullptr) return Fail(*ep, FI_EINVAL, "fi_ep_bind: bfid NULL");
  if (ep->enabled.load()) {
    return Fail(*ep, FI_EOPBADSTATE, "fi_ep_bind: the endpoint is enabled");
  }
  if (UtilCq* cq = AsUtilCq(bound); cq != nullptr) {
    if (cq->domain != ep->domain) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: CQ of another domain");
    }
    return BindCq(ep, cq, flags);
  }
  if (UtilCntr* cntr = AsUtilCntr(bound); cntr != nullptr) {
    if (!ServesDomain(cntr->domain, *ep->domain)) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: counter of another domain");
    }
    return BindCntr(ep, cntr, flags);
  }
  if (UtilEq* eq = AsUtilEq(bound); eq != nullptr) {
    if (eq->fabric != ep->domain->fabric || ep->eq != nullptr || flags != 0) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: one EQ of the endpoint's "
                                  "fabric, flags 0");
    }
    ep->eq = eq;
    eq->open_children.fetch_add(1);
    // Reads and waits on the EQ advance the endpoint's data path too: that
    // is where a peer's shutdown shows. Not where the application
    // serializes each domain's calls itself and the endpoints drop their
    // locks (AppSerializesDomain): there only the domain's own calls may
    // touch them.
    if (ep->mutex.needed()) eq->wait->AddEngine(ep->domain->progress);
    return 0;
  }
  if (UtilAv* av = AsUtilAv(bound); av != nullptr) {
    // The owner's AV serves only in the endpoint's own address format.
    bool other_format = av->domain != ep->domain &&
                        av->addr_format != ep->info->addr_format;
    if (!ServesDomain(av->domain, *ep->domain) || other_format ||
        ep->av != nullptr || flags != 0) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: one AV of the endpoint's "
                                  "domain (or of its peer domain's owner, "
                                  "same address format), flags 0");
    }
    if (ep->info->ep_attr->type == FI_EP_MSG) {
      return Fail(*ep, FI_EINVAL, "fi_ep_bind: MSG endpoints take no AV");
    }
    ep->av = av;
    av->open_children.fetch_add(1);
    return 0;
  }
  return Fail(*ep, FI_EINVAL,
              absl::StrCat("fi_ep_bind: cannot bind an object of class ",
                           bound->fclass));
}

int CheckEnable(const UtilEndpoint& ep) {
  const fi_info& info = *ep.info;
  uint64_t caps = info.caps;
  bool sends = (caps & (FI_SEND | FI_READ | FI_WRITE)) != 0 ||
               (caps & (FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE)) == 0;
  bool receives = (caps & FI_RECV) != 0 ||
                  (caps & (FI_SEND | FI_READ | FI_WRITE)) == 0;
  bool tx_cntr = ep.cntrs[kSendCntr] || ep.cntrs[kReadCntr] ||
                 ep.cntrs[kWriteCntr];
  if (sends && ep.tx_cq == nullptr && !tx_cntr) {
    return Fail(ep, FI_ENOCQ, "fi_enable: no transmit CQ or counter bound");
  }
  if (receives && ep.rx_cq == nullptr && ep.cntrs[kRecvCntr] == nullptr) {
    return Fail(ep, FI_ENOCQ, "fi_enable: no receive CQ or counter bound");
  }
  fi_ep_type type = info.ep_attr->type;
  if ((type == FI_EP_RDM || type == FI_EP_DGRAM) && ep.av == nullptr) {
    return Fail(ep, FI_ENOAV, "fi_enable: no AV bound");
  }
  if (type == FI_EP_MSG && ep.eq == nullptr) {
    return Fail(ep, FI_ENOEQ, "fi_enable: no EQ bound");
  }
  return 0;
}

int ControlUtilEndpoint(UtilEndpoint* ep, int command, void* arg) {
  if (command != FI_GETOPSFLAG && command != FI_SETOPSFLAG) return -FI_ENOSYS;
  auto* flags = static_cast<uint64_t*>(arg);
  if (flags == nullptr) return Fail(*ep, FI_EINVAL, "fi_control: arg NULL");
  bool tx = (*flags & FI_TRANSMIT) != 0;
  bool rx = (*flags & FI_RECV) != 0;
  if (tx == rx) {
    return Fail(*ep, FI_EINVAL, "fi_control: ops flags need exactly one of "
                                "FI_TRANSMIT, FI_RECV");
  }
  uint64_t& ops = tx ? ep->tx_op_flags : ep->rx_op_flags;
  if (command == FI_GETOPSFLAG) {
    *flags = ops;
  } else {
    ops = *flags & ~(FI_TRANSMIT | FI_RECV);
  }
  return 0;
}

int GetOptUtilEndpoint(UtilEndpoint* ep, int level, int name, void* value,
                       size_t* len) {
  if (value == nullptr || len == nullptr) {
    return Fail(*ep, FI_EINVAL, "fi_getopt: optval and optlen needed");
  }
  if (level != FI_OPT_ENDPOINT) return -FI_ENOPROTOOPT;
  size_t answer;
  switch (name) {
    case FI_OPT_MIN_MULTI_RECV:
      answer = ep->min_multi_recv;
      break;
    case FI_OPT_CM_DATA_SIZE:
      answer = ep->cm_data_size;
      break;
    default:
      return -FI_ENOPROTOOPT;
  }
  return CopySizeOpt(answer, value, len);
}

int CopySizeOpt(size_t answer, void* value, size_t* len) {
  if (*len < sizeof(size_t)) {
    *len = sizeof(size_t);
    return -FI_ETOOSMALL;
  }
  memcpy(value, &answer, sizeof(answer));
  *len = sizeof(size_t);
  return 0;
}

int SetOptUtilEndpoint(UtilEndpoint* ep, int level, int name,
                       const void* value, size_t len) {
  if (level != FI_OPT_ENDPOINT || name != FI_OPT_MIN_MULTI_RECV) {
    return -FI_ENOPROTOOPT;
  }
  if (value == nullptr || len != sizeof(size_t)) {
    return Fail(*ep, FI_EINVAL, "fi_setopt: FI_OPT_MIN_MULTI_RECV is a "
                                "size_t");
  }
  memcpy(&ep->min_multi_recv, value, sizeof(size_t));
  return 0;
}

std::string AuthKeyOf(const fi_info& info) {
  const uint8_t* key = nullptr;
  size_t size = 0;
  if (info.ep_attr != nullptr && info.ep_attr->auth_key_size > 0) {
    key = info.ep_attr->auth_key;
    size = info.ep_attr->auth_key_size;
  } else if (info.domain_attr != nullptr &&
             info.domain_attr->auth_key_size > 0) {
    key = info.domain_attr->auth_key;
    size = info.domain_attr->auth_key_size;
  }
  return key != nullptr ? std::string(reinterpret_cast<const char*>(key), size)
                        : std::string();
}

void ReportSuccess(UtilEndpoint* ep, UtilCq* cq, bool write_entry,
                   bool reserved, const fi_cq_tagged_entry& entry,
                   fi_addr_t source, CntrKind cntr) {
  if (write_entry && cq != nullptr) {
    if (CqWrite(cq, entry, source, reserved) != 0) {
      FI_WARN(Log(*ep), FI_LOG_CQ, "the peer CQ's owner refused a completion\n");
    }
  } else if (reserved && cq != nullptr) {
    CqUnreserve(cq);
  }
  if (ep->cntrs[cntr] != nullptr) CntrAdd(ep->cntrs[cntr], 1);
}

void ReportError(UtilEndpoint* ep, UtilCq* cq, bool reserved,
                 const fi_cq_tagged_entry& entry, int err, size_t olen,
                 CntrKind cntr) {
  if (cq != nullptr) WriteErrorEntry(cq, reserved, entry, err, olen);
  if (ep->cntrs[cntr] != nullptr) CntrAddError(ep->cntrs[cntr], 1);
}

}  // namespace fabric

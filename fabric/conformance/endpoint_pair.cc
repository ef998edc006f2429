#include "fabric/conformance/endpoint_pair.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "fabric/providers/rxm/rxm_ep.h"

namespace ofi::conformance {
namespace {

using fabric::fixtures::CloseObjects;
using fabric::fixtures::CmEntryOf;
using fabric::fixtures::WaitForEvent;

absl::Status CallFailed(const char* what, int rc) {
  return absl::InternalError(
      absl::StrCat(what, ": ", fi_strerror(rc < 0 ? -rc : rc), " (", rc, ")"));
}

// The next event of `eq`, which must be `want`, within 10 s: its
// fi_eq_cm_entry in *out.
absl::Status WaitCmEvent(fid_eq* eq, uint32_t want, fi_eq_cm_entry* out) {
  uint32_t event = 0;
  std::vector<char> data;
  fi_eq_err_entry error = {};
  ssize_t rc =
      WaitForEvent(eq, &event, &data, &error, std::chrono::seconds(10));
  if (rc == -FI_EAVAIL) {
    return absl::InternalError(absl::StrCat("EQ error while waiting for event ",
                                            want, ": ",
                                            fi_strerror(error.err)));
  }
  if (rc == -FI_EAGAIN) {
    return absl::DeadlineExceededError(
        absl::StrCat("no EQ event ", want, " within 10 s"));
  }
  if (rc < 0) return CallFailed("fi_eq_read", static_cast<int>(rc));
  if (event != want) {
    return absl::InternalError(
        absl::StrCat("EQ event ", event, " instead of ", want));
  }
  *out = CmEntryOf(data);
  return absl::OkStatus();
}

// The error entry of `cq`, which fi_cq_readfrom reported (-FI_EAVAIL): its
// err as the status, the entry in *error when given.
absl::Status ReadError(fid_cq* cq, fi_cq_err_entry* error) {
  fi_cq_err_entry entry = {};
  ssize_t rc = fi_cq_readerr(cq, &entry, 0);
  if (rc != 1) return CallFailed("fi_cq_readerr", static_cast<int>(rc));
  if (error != nullptr) *error = entry;
  return absl::Status(absl::StatusCode::kAborted,
                      absl::StrCat("error entry: ", fi_strerror(entry.err),
                                   " (", entry.err, ")"));
}

// A copy of `info` whose destination is the `len` bytes at `name`.
fi_info* InfoTo(const fi_info* info, const void* name, size_t len) {
  fi_info* to = fi_dupinfo(info);
  if (to == nullptr) return nullptr;
  free(to->dest_addr);
  to->dest_addr = malloc(len);
  memcpy(to->dest_addr, name, len);
  to->dest_addrlen = len;
  return to;
}

}  // namespace

absl::StatusOr<fi_info*> CaseInfo(const ProviderCase& c, fi_ep_type type,
                                  const PairOptions& options) {
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) return CallFailed("fi_allocinfo", -FI_ENOMEM);
  hints->fabric_attr->prov_name = strdup(c.provider);
  hints->ep_attr->type = type;
  hints->caps = options.caps;
  if (type == FI_EP_RDM) hints->caps |= FI_SOURCE;
  // rxm's streams, which read large messages from their senders (RMA).
  if (type == FI_EP_MSG && c.rxm) hints->caps = FI_MSG | FI_RMA;
  hints->addr_format = c.addr_format;
  hints->domain_attr->resource_mgmt = options.resource_mgmt;
  hints->domain_attr->threading = options.threading;
  if (options.shared_rx) hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
  if (options.shared_tx) hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  // Tests post a receive for a write's remote CQ data where the info keeps
  // this mode.
  hints->mode = FI_RX_CQ_DATA;
  fi_info* info = nullptr;
  // Any port of the case's node; verbs (no node) answers with its device's.
  int rc = fi_getinfo(FI_VERSION(1, 18), c.node, c.node ? "0" : nullptr,
                      c.node ? FI_SOURCE : 0, hints, &info);
  fi_freeinfo(hints);
  if (rc == -FI_ENODATA) {
    return absl::NotFoundError(absl::StrCat(
        c.name, " offers no endpoint with caps 0x", absl::Hex(options.caps),
        " (fi_getinfo: -FI_ENODATA)"));
  }
  if (rc != 0) return CallFailed("fi_getinfo", rc);
  return info;
}

const std::vector<ProviderCase>& AllCases() {
  static const std::vector<ProviderCase> cases = {
      {"tcp_msg", "tcp", FI_EP_MSG, nullptr, false},
      {"tcp_rdm", "tcp", FI_EP_RDM, "0", false},
      {"tcp_rdm_local", "tcp", FI_EP_RDM, "1", false},
      {"shm_rdm", "shm", FI_EP_RDM, nullptr, false},
      {"rxm_over_tcp_msg", "tcp", FI_EP_RDM, "0", true},
      {"udp_dgram", "udp", FI_EP_DGRAM, nullptr, false},
      {"verbs_msg", "verbs", FI_EP_MSG, nullptr, false, nullptr},
      {"verbs_rdm", "verbs", FI_EP_RDM, nullptr, false, nullptr},
      {"verbs_dgram", "verbs", FI_EP_DGRAM, nullptr, false, nullptr,
       FI_ADDR_IB_UD},
  };
  return cases;
}

absl::StatusOr<Completion> Side::Wait(std::chrono::milliseconds timeout,
                                      fi_cq_err_entry* error) {
  Completion completion;
  ssize_t rc = fabric::fixtures::WaitForCompletion(cq, &completion.entry,
                                                   &completion.source, timeout);
  if (rc == 1) return completion;
  if (rc == -FI_EAGAIN) {
    return absl::DeadlineExceededError("no completion in time");
  }
  if (rc == -FI_EAVAIL) return ReadError(cq, error);
  return CallFailed("fi_cq_readfrom", static_cast<int>(rc));
}

ssize_t Side::PostMultiRecv(void* buf, size_t size, void* context) {
  iovec iov = {buf, size};
  fi_msg msg = {};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = FI_ADDR_UNSPEC;
  msg.context = context;
  return fi_recvmsg(ep, &msg, FI_MULTI_RECV);
}

absl::StatusOr<std::optional<Completion>> Side::Poll(fi_cq_err_entry* error) {
  absl::StatusOr<Completion> got = Wait(std::chrono::milliseconds(0), error);
  if (absl::IsDeadlineExceeded(got.status())) return std::nullopt;
  if (!got.ok()) return got.status();
  return *got;
}

EndpointPair::~EndpointPair() { Close().IgnoreError(); }

absl::Status EndpointPair::Open(const ProviderCase& c,
                                const PairOptions& options) {
  case_ = &c;
  if (c.tcp_shm != nullptr) setenv("FI_TCP_SHM", c.tcp_shm, 1);
  absl::StatusOr<fi_info*> info = CaseInfo(c, c.type, options);
  if (!info.ok()) return info.status();
  shared_.info = *info;
  max_msg_size_ = options.max_msg_size;
  LowerMaxMsgSize(shared_.info);
  if (c.rxm) {
    absl::StatusOr<fi_info*> msg = CaseInfo(c, FI_EP_MSG, options);
    if (!msg.ok()) return msg.status();
    msg_info_ = *msg;
  }
  int rc = fi_fabric(shared_.info->fabric_attr, &shared_.fabric, nullptr);
  if (rc != 0) return CallFailed("fi_fabric", rc);
  rc = fi_domain(shared_.fabric, shared_.info, &shared_.domain, nullptr);
  if (rc != 0) return CallFailed("fi_domain", rc);
  if (c.type != FI_EP_MSG) {
    rc = fabric::fixtures::OpenTableAv(shared_.domain, &shared_.av);
    if (rc == 0 && options.b_learns_a_late) {
      rc = fabric::fixtures::OpenTableAv(shared_.domain, &b_.av);
    }
    if (rc != 0) return CallFailed("fi_av_open", rc);
  } else {
    for (Side* side : {&a_, &b_}) {
      fi_eq_attr eq_attr = {};
      rc = fi_eq_open(shared_.fabric, &eq_attr, &side->eq, nullptr);
      if (rc != 0) return CallFailed("fi_eq_open", rc);
    }
  }
  counters_ = options.counters;
  if (absl::Status status = OpenSharedContexts(options); !status.ok()) {
    return status;
  }
  if (options.region_size > 0) {
    b_.region.assign(options.region_size, 0);
    rc = fi_mr_reg(shared_.domain, b_.region.data(), b_.region.size(),
                   FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &b_.mr, nullptr);
    if (rc != 0) return CallFailed("fi_mr_reg", rc);
  }
  if (absl::Status status = OpenIdleEndpoints(options.idle_endpoints);
      !status.ok()) {
    return status;
  }
  // fi_cq_open after fi_getinfo as for the other types, inside Connect.
  if (c.type == FI_EP_MSG) return Connect();
  if (absl::Status status =
          OpenSide(&a_, shared_.info, options.cq_size_a, shared_.av);
      !status.ok()) {
    return status;
  }
  if (absl::Status status = OpenSide(&b_, shared_.info, options.cq_size_b,
                                     b_.av ? b_.av : shared_.av);
      !status.ok()) {
    return status;
  }
  char names[2][128];
  for (int i = 0; i < 2; ++i) {
    size_t len = sizeof(names[i]);
    Side* side = i == 0 ? &a_ : &b_;
    rc = fi_getname(&side->ep->fid, names[i], &len);
    if (rc != 0) return CallFailed("fi_getname", rc);
    rc = fi_av_insert(shared_.av, names[i], 1, &side->self, 0, nullptr);
    if (rc != 1) return CallFailed("fi_av_insert", rc);
    if (i == 0) name_a_.assign(names[0], names[0] + len);
  }
  a_.peer = b_.self;
  b_.peer = b_.av ? FI_ADDR_UNSPEC : a_.self;
  if (b_.av) {
    fi_addr_t own;
    rc = fi_av_insert(b_.av, names[1], 1, &own, 0, nullptr);
    if (rc != 1) return CallFailed("fi_av_insert(b's own)", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::InsertAAtB() {
  if (!b_.av) {
    return absl::FailedPreconditionError(
        "InsertAAtB needs PairOptions::b_learns_a_late");
  }
  int rc = fi_av_insert(b_.av, name_a_.data(), 1, &b_.peer, 0, nullptr);
  return rc == 1 ? absl::OkStatus() : CallFailed("fi_av_insert", rc);
}

absl::Status EndpointPair::OpenSharedContexts(const PairOptions& options) {
  if (options.shared_rx) {
    fi_rx_attr attr = {};
    int rc = fi_srx_context(shared_.domain, &attr, &srx_, nullptr);
    if (rc != 0) return CallFailed("fi_srx_context", rc);
  }
  if (options.shared_tx) {
    fi_tx_attr attr = {};
    attr.size = options.shared_tx_size;
    int rc = fi_stx_context(shared_.domain, &attr, &stx_, nullptr);
    if (rc != 0) return CallFailed("fi_stx_context", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::OpenIdleEndpoints(size_t count) {
  if (count == 0) return absl::OkStatus();
  if (case_->type == FI_EP_MSG) {
    for (size_t i = 0; i < count; ++i) {
      fid_pep* pep = nullptr;
      int rc = fi_passive_ep(shared_.fabric, shared_.info, &pep, nullptr);
      if (rc != 0) return CallFailed("fi_passive_ep(idle)", rc);
      idle_.push_back(&pep->fid);
      rc = fi_pep_bind(pep, &a_.eq->fid, 0);
      if (rc == 0) rc = fi_listen(pep);
      if (rc != 0) return CallFailed("fi_listen(idle)", rc);
    }
    return absl::OkStatus();
  }
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  int rc = fi_cq_open(shared_.domain, &cq_attr, &shared_.cq, nullptr);
  if (rc != 0) return CallFailed("fi_cq_open(idle)", rc);
  for (size_t i = 0; i < count; ++i) {
    fid_ep* ep = nullptr;
    rc = case_->rxm ? fabric::rxm::OpenRxmEp(shared_.domain, shared_.info,
                                             *msg_info_, &ep, nullptr)
                    : fi_endpoint(shared_.domain, shared_.info, &ep, nullptr);
    if (rc != 0) return CallFailed("fi_endpoint(idle)", rc);
    idle_.push_back(&ep->fid);
    rc = fi_ep_bind(ep, &shared_.av->fid, 0);
    if (rc == 0) rc = fi_ep_bind(ep, &shared_.cq->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_enable(ep);
    if (rc != 0) return CallFailed("fi_enable(idle)", rc);
  }
  return absl::OkStatus();
}

void EndpointPair::LowerMaxMsgSize(fi_info* info) const {
  if (max_msg_size_ != 0 && max_msg_size_ < info->ep_attr->max_msg_size) {
    info->ep_attr->max_msg_size = max_msg_size_;
  }
}

absl::Status EndpointPair::OpenSide(Side* side, fi_info* info, size_t cq_size,
                                    fid_av* av) {
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = cq_size;
  int rc = fi_cq_open(shared_.domain, &cq_attr, &side->cq, nullptr);
  if (rc != 0) return CallFailed("fi_cq_open", rc);
  LowerMaxMsgSize(info);
  rc = case_->rxm ? fabric::rxm::OpenRxmEp(shared_.domain, info, *msg_info_,
                                           &side->ep, nullptr)
                  : fi_endpoint(shared_.domain, info, &side->ep, nullptr);
  if (rc != 0) return CallFailed("fi_endpoint", rc);
  if (av != nullptr) {
    rc = fi_ep_bind(side->ep, &av->fid, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(av)", rc);
  }
  rc = fi_ep_bind(side->ep, &side->cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc != 0) return CallFailed("fi_ep_bind(cq)", rc);
  for (fid* shared :
       {srx_ ? &srx_->fid : nullptr, stx_ ? &stx_->fid : nullptr}) {
    if (shared == nullptr) continue;
    rc = fi_ep_bind(side->ep, shared, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(shared context)", rc);
  }
  if (counters_) {
    if (absl::Status status = BindCounters(side); !status.ok()) return status;
  }
  if (case_->type == FI_EP_MSG) {
    rc = fi_ep_bind(side->ep, &side->eq->fid, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(eq)", rc);
  }
  rc = fi_enable(side->ep);
  return rc == 0 ? absl::OkStatus() : CallFailed("fi_enable", rc);
}

absl::Status EndpointPair::BindCounters(Side* side) {
  constexpr uint64_t kFlags[] = {FI_SEND, FI_RECV, FI_READ, FI_WRITE,
                                 FI_REMOTE_READ, FI_REMOTE_WRITE};
  for (uint64_t flag : kFlags) {
    fi_cntr_attr attr = {};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr* cntr = nullptr;
    int rc = fi_cntr_open(shared_.domain, &attr, &cntr, nullptr);
    if (rc != 0) return CallFailed("fi_cntr_open", rc);
    side->counters.push_back(cntr);
    rc = fi_ep_bind(side->ep, &cntr->fid, flag);
    if (rc != 0) return CallFailed("fi_ep_bind(cntr)", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::Connect() {
  int rc = fi_passive_ep(shared_.fabric, shared_.info, &b_.pep, nullptr);
  if (rc != 0) return CallFailed("fi_passive_ep", rc);
  rc = fi_pep_bind(b_.pep, &b_.eq->fid, 0);
  if (rc == 0) rc = fi_listen(b_.pep);
  if (rc != 0) return CallFailed("fi_listen", rc);
  char name[128];
  size_t len = sizeof(name);
  rc = fi_getname(&b_.pep->fid, name, &len);
  if (rc != 0) return CallFailed("fi_getname(pep)", rc);
  listen_name_.assign(name, len);
  // a connects to the passive endpoint's address.
  fi_info* a_info = InfoTo(shared_.info, name, len);
  if (a_info == nullptr) return CallFailed("fi_dupinfo", -FI_ENOMEM);
  absl::Status opened = OpenSide(&a_, a_info, 0, nullptr);
  fi_freeinfo(a_info);
  if (!opened.ok()) return opened;
  rc = fi_connect(a_.ep, name, nullptr, 0);
  if (rc != 0) return CallFailed("fi_connect", rc);
  fi_eq_cm_entry request;
  if (absl::Status s = WaitCmEvent(b_.eq, FI_CONNREQ, &request); !s.ok()) {
    return s;
  }
  opened = OpenSide(&b_, request.info, 0, nullptr);
  fi_freeinfo(request.info);
  if (!opened.ok()) return opened;
  rc = fi_accept(b_.ep, nullptr, 0);
  if (rc != 0) return CallFailed("fi_accept", rc);
  fi_eq_cm_entry connected;
  if (absl::Status s = WaitCmEvent(b_.eq, FI_CONNECTED, &connected); !s.ok()) {
    return s;
  }
  return WaitCmEvent(a_.eq, FI_CONNECTED, &connected);
}

absl::StatusOr<fid_ep*> EndpointPair::ConnectOneMore(
    const std::string& name) {
  fi_info* info = InfoTo(shared_.info, name.data(), name.size());
  if (info == nullptr) return CallFailed("fi_dupinfo", -FI_ENOMEM);
  absl::StatusOr<fid_ep*> ep = OpenOneMore(info, a_.eq, a_.cq, [&](fid_ep* ep) {
    return fi_connect(ep, name.data(), nullptr, 0);
  });
  fi_freeinfo(info);
  return ep;
}

absl::StatusOr<fid_ep*> EndpointPair::AcceptOneMore(
    const std::function<void(fid_ep*)>& before_accept, fid_cq* cq) {
  fi_eq_cm_entry request;
  if (absl::Status s = WaitCmEvent(b_.eq, FI_CONNREQ, &request); !s.ok()) {
    return s;
  }
  absl::StatusOr<fid_ep*> ep = OpenOneMore(
      request.info, b_.eq, cq != nullptr ? cq : b_.cq, [&](fid_ep* ep) {
        before_accept(ep);
        return fi_accept(ep, nullptr, 0);
      });
  fi_freeinfo(request.info);
  return ep;
}

absl::StatusOr<fid_ep*> EndpointPair::OpenOneMore(
    fi_info* info, fid_eq* eq, fid_cq* cq,
    const std::function<int(fid_ep*)>& start) {
  fid_ep* ep = nullptr;
  int rc = fi_endpoint(shared_.domain, info, &ep, nullptr);
  if (rc != 0) return CallFailed("fi_endpoint", rc);
  rc = fi_ep_bind(ep, &eq->fid, 0);
  if (rc == 0) rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc == 0) rc = fi_enable(ep);
  if (rc == 0) rc = start(ep);
  fi_eq_cm_entry connected;
  absl::Status status =
      rc != 0 ? CallFailed("fi_connect / fi_accept", rc)
              : WaitCmEvent(eq, FI_CONNECTED, &connected);
  if (!status.ok()) {
    fi_close(&ep->fid);
    return status;
  }
  return ep;
}

uint64_t EndpointPair::RegionAddress(size_t offset) const {
  if (shared_.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) {
    return reinterpret_cast<uint64_t>(b_.region.data() + offset);
  }
  return offset;
}

void PrintTo(const ProviderCase& c, std::ostream* out) { *out << c.name; }

bool CancelsReceives(fid_ep* ep) {
  char never_posted;
  ssize_t rc = fi_cancel(&ep->fid, &never_posted);
  if (rc != -FI_ENOSYS) EXPECT_EQ(rc, -FI_ENOENT);
  return rc != -FI_ENOSYS;
}

absl::Status EndpointPair::Close() {
  int rc = 0;
  auto close = [&rc](fid* object) {
    int closed = fi_close(object);
    if (rc == 0) rc = closed;
  };
  // The endpoints first, then what they were bound to, children first.
  for (Side* side : {&a_, &b_}) {
    if (side->ep != nullptr) close(&side->ep->fid);
    side->ep = nullptr;
  }
  for (fid* idle : idle_) close(idle);
  idle_.clear();
  if (srx_ != nullptr) close(&srx_->fid);
  if (stx_ != nullptr) close(&stx_->fid);
  srx_ = nullptr;
  stx_ = nullptr;
  for (Side* side : {&a_, &b_}) {
    for (fid_cntr* cntr : side->counters) close(&cntr->fid);
    side->counters.clear();
    int closed = CloseObjects(side);
    if (rc == 0) rc = closed;
    *side = Side();
  }
  int closed = CloseObjects(&shared_);
  if (rc == 0) rc = closed;
  fi_freeinfo(msg_info_);
  msg_info_ = nullptr;
  if (case_ != nullptr && case_->tcp_shm != nullptr) unsetenv("FI_TCP_SHM");
  case_ = nullptr;
  return rc == 0 ? absl::OkStatus() : CallFailed("fi_close", rc);
}

void PairTest::TearDown() {
  absl::Status closed = pair_.Close();
  EXPECT_TRUE(closed.ok()) << closed;
}

absl::Status PairTest::OpenPair(const PairOptions& options) {
  return pair_.Open(GetParam(), options);
}

}  // namespace ofi::conformance

#include "fabric/conformance/endpoint_pair.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/providers/rxm/rxm_ep.h"

namespace ofi::conformance {
namespace {

using Clock = std::chrono::steady_clock;

absl::Status CallFailed(const char* what, int rc) {
  return absl::InternalError(
      absl::StrCat(what, ": ", fi_strerror(rc < 0 ? -rc : rc), " (", rc, ")"));
}

// fi_getinfo for `c` on its node (any port) with `options`.
absl::StatusOr<Info> CaseInfo(const ProviderCase& c, fi_ep_type type,
                              const PairOptions& options) {
  Info hints = AllocInfo();
  hints->fabric_attr->prov_name = strdup(c.provider);
  hints->ep_attr->type = type;
  hints->caps = options.caps;
  if (type == FI_EP_RDM) hints->caps |= FI_SOURCE;
  // rxm's streams, which read large messages from their senders (RMA).
  if (type == FI_EP_MSG && c.rxm) hints->caps = FI_MSG | FI_RMA;
  hints->addr_format = c.addr_format;
  hints->domain_attr->resource_mgmt = options.resource_mgmt;
  if (options.shared_rx) hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
  if (options.shared_tx) hints->ep_attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
  hints->domain_attr->mr_mode =
      FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  // Tests post a receive for a write's remote CQ data where the info keeps
  // this mode.
  hints->mode = FI_RX_CQ_DATA;
  GetInfoOptions get;
  if (c.node != nullptr) {
    get.node = c.node;
    get.service = "0";
    get.flags = FI_SOURCE;
  }
  absl::StatusOr<Info> info = GetInfo(hints.get(), get);
  if (absl::IsNotFound(info.status())) {
    return absl::NotFoundError(absl::StrCat(
        c.name, " offers no endpoint with caps 0x", absl::Hex(options.caps),
        " (fi_getinfo: -FI_ENODATA)"));
  }
  return info;
}

absl::Status WaitCmEvent(Eq& eq, uint32_t want, fi_eq_cm_entry* out) {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    absl::StatusOr<std::optional<EqEvent>> event = eq.Read();
    if (!event.ok()) {
      absl::StatusOr<EqError> error = eq.ReadError();
      return absl::InternalError(absl::StrCat(
          "EQ error while waiting for event ", want, ": ",
          error.ok() ? fi_strerror(error->entry.err) : "unreadable"));
    }
    if (!event->has_value()) continue;
    if ((*event)->event != want) {
      return absl::InternalError(absl::StrCat("EQ event ", (*event)->event,
                                              " instead of ", want));
    }
    memset(out, 0, sizeof(*out));
    memcpy(out, (*event)->data.data(),
           std::min(sizeof(*out), (*event)->data.size()));
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no EQ event ", want, " within 10 s"));
}

}  // namespace

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
  Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    absl::StatusOr<std::optional<Completion>> got = Poll(error);
    if (!got.ok()) return got.status();
    if (got->has_value()) return **got;
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError("no completion in time");
    }
  }
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
  Completion completion;
  ssize_t rc = fi_cq_readfrom(cq.get(), &completion.entry, 1,
                              &completion.source);
  if (rc == 1) return completion;
  if (rc == -FI_EAGAIN) return std::nullopt;
  if (rc != -FI_EAVAIL) return CallFailed("fi_cq_readfrom", static_cast<int>(rc));
  fi_cq_err_entry entry = {};
  rc = fi_cq_readerr(cq.get(), &entry, 0);
  if (rc != 1) return CallFailed("fi_cq_readerr", static_cast<int>(rc));
  if (error != nullptr) *error = entry;
  return absl::Status(absl::StatusCode::kAborted,
                      absl::StrCat("error entry: ", fi_strerror(entry.err),
                                   " (", entry.err, ")"));
}

EndpointPair::~EndpointPair() { Close().IgnoreError(); }

absl::Status EndpointPair::Open(const ProviderCase& c,
                                const PairOptions& options) {
  case_ = &c;
  if (c.tcp_shm != nullptr) setenv("FI_TCP_SHM", c.tcp_shm, 1);
  absl::StatusOr<Info> info = CaseInfo(c, c.type, options);
  if (!info.ok()) return info.status();
  info_ = std::move(*info);
  max_msg_size_ = options.max_msg_size;
  if (max_msg_size_ != 0 && max_msg_size_ < info_->ep_attr->max_msg_size) {
    info_->ep_attr->max_msg_size = max_msg_size_;
  }
  if (c.rxm) {
    absl::StatusOr<Info> msg = CaseInfo(c, FI_EP_MSG, options);
    if (!msg.ok()) return msg.status();
    msg_info_ = std::move(*msg);
  }
  absl::StatusOr<Fabric> fabric = OpenFabric(*info_->fabric_attr);
  if (!fabric.ok()) return fabric.status();
  fabric_ = std::move(*fabric);
  absl::StatusOr<Domain> domain = OpenDomain(fabric_, *info_);
  if (!domain.ok()) return domain.status();
  domain_ = std::move(*domain);
  if (c.type != FI_EP_MSG) {
    fi_av_attr av_attr = {};
    av_attr.type = FI_AV_TABLE;
    for (Av* av : {&av_, &av_b_}) {
      if (av == &av_b_ && !options.b_learns_a_late) break;
      absl::StatusOr<Av> opened = OpenAv(domain_, av_attr);
      if (!opened.ok()) return opened.status();
      *av = std::move(*opened);
    }
  } else {
    fi_eq_attr eq_attr = {};
    for (Eq* eq : {&eq_a_, &eq_b_}) {
      absl::StatusOr<Eq> opened = OpenEq(fabric_, eq_attr);
      if (!opened.ok()) return opened.status();
      *eq = std::move(*opened);
    }
  }
  counters_ = options.counters;
  if (absl::Status status = OpenSharedContexts(options); !status.ok()) {
    return status;
  }
  if (options.region_size > 0) {
    b_.region.assign(options.region_size, 0);
    absl::StatusOr<Mr> mr =
        RegisterMr(domain_, b_.region.data(), b_.region.size(),
                   FI_REMOTE_READ | FI_REMOTE_WRITE);
    if (!mr.ok()) return mr.status();
    b_.mr = std::move(*mr);
  }
  if (absl::Status status = OpenIdleEndpoints(options.idle_endpoints);
      !status.ok()) {
    return status;
  }
  if (c.type == FI_EP_MSG) {
    absl::Status connected = Connect();
    // fi_cq_open after fi_getinfo as for the other types, inside Connect.
    return connected;
  }
  if (absl::Status status = OpenSide(&a_, options.cq_size_a, av_);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          OpenSide(&b_, options.cq_size_b, av_b_ ? av_b_ : av_);
      !status.ok()) {
    return status;
  }
  char names[2][128];
  for (int i = 0; i < 2; ++i) {
    size_t len = sizeof(names[i]);
    Side* side = i == 0 ? &a_ : &b_;
    int rc = fi_getname(&side->ep->fid, names[i], &len);
    if (rc != 0) return CallFailed("fi_getname", rc);
    absl::StatusOr<std::vector<fi_addr_t>> inserted = av_.Insert(names[i], 1);
    if (!inserted.ok()) return inserted.status();
    side->self = (*inserted)[0];
    if (i == 0) name_a_.assign(names[0], names[0] + len);
  }
  a_.peer = b_.self;
  b_.peer = av_b_ ? FI_ADDR_UNSPEC : a_.self;
  if (av_b_) {
    absl::StatusOr<std::vector<fi_addr_t>> own = av_b_.Insert(names[1], 1);
    if (!own.ok()) return own.status();
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::InsertAAtB() {
  if (!av_b_) {
    return absl::FailedPreconditionError(
        "InsertAAtB needs PairOptions::b_learns_a_late");
  }
  absl::StatusOr<std::vector<fi_addr_t>> inserted =
      av_b_.Insert(name_a_.data(), 1);
  if (!inserted.ok()) return inserted.status();
  b_.peer = (*inserted)[0];
  return absl::OkStatus();
}

absl::Status EndpointPair::OpenSharedContexts(const PairOptions& options) {
  if (options.shared_rx) {
    fi_rx_attr attr = {};
    int rc = fi_srx_context(domain_.get(), &attr, &srx_, nullptr);
    if (rc != 0) return CallFailed("fi_srx_context", rc);
  }
  if (options.shared_tx) {
    fi_tx_attr attr = {};
    attr.size = options.shared_tx_size;
    int rc = fi_stx_context(domain_.get(), &attr, &stx_, nullptr);
    if (rc != 0) return CallFailed("fi_stx_context", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::OpenIdleEndpoints(size_t count) {
  if (count == 0) return absl::OkStatus();
  if (case_->type == FI_EP_MSG) {
    for (size_t i = 0; i < count; ++i) {
      fid_pep* pep = nullptr;
      int rc = fi_passive_ep(fabric_.get(), info_.get(), &pep, nullptr);
      if (rc != 0) return CallFailed("fi_passive_ep(idle)", rc);
      idle_.push_back(&pep->fid);
      rc = fi_pep_bind(pep, &eq_a_->fid, 0);
      if (rc == 0) rc = fi_listen(pep);
      if (rc != 0) return CallFailed("fi_listen(idle)", rc);
    }
    return absl::OkStatus();
  }
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  absl::StatusOr<Cq> cq = OpenCq(domain_, cq_attr);
  if (!cq.ok()) return cq.status();
  idle_cq_ = std::move(*cq);
  for (size_t i = 0; i < count; ++i) {
    fid_ep* ep = nullptr;
    int rc = case_->rxm ? fabric::rxm::OpenRxmEp(domain_.get(), info_.get(),
                                                 *msg_info_, &ep, nullptr)
                        : fi_endpoint(domain_.get(), info_.get(), &ep, nullptr);
    if (rc != 0) return CallFailed("fi_endpoint(idle)", rc);
    idle_.push_back(&ep->fid);
    rc = fi_ep_bind(ep, &av_->fid, 0);
    if (rc == 0) rc = fi_ep_bind(ep, &idle_cq_->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_enable(ep);
    if (rc != 0) return CallFailed("fi_enable(idle)", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::OpenSide(Side* side, size_t cq_size, Av& av) {
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = cq_size;
  absl::StatusOr<Cq> cq = OpenCq(domain_, cq_attr);
  if (!cq.ok()) return cq.status();
  side->cq = std::move(*cq);
  if (max_msg_size_ != 0 && max_msg_size_ < info_->ep_attr->max_msg_size) {
    info_->ep_attr->max_msg_size = max_msg_size_;
  }
  int rc = case_->rxm ? fabric::rxm::OpenRxmEp(domain_.get(), info_.get(),
                                               *msg_info_, &side->ep, nullptr)
                      : fi_endpoint(domain_.get(), info_.get(), &side->ep,
                                    nullptr);
  if (rc != 0) return CallFailed("fi_endpoint", rc);
  if (av) {
    rc = fi_ep_bind(side->ep, &av->fid, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(av)", rc);
  }
  rc = fi_ep_bind(side->ep, &side->cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc != 0) return CallFailed("fi_ep_bind(cq)", rc);
  if (srx_ != nullptr) {
    rc = fi_ep_bind(side->ep, &srx_->fid, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(srx)", rc);
  }
  if (stx_ != nullptr) {
    rc = fi_ep_bind(side->ep, &stx_->fid, 0);
    if (rc != 0) return CallFailed("fi_ep_bind(stx)", rc);
  }
  if (counters_) {
    if (absl::Status status = BindCounters(side); !status.ok()) return status;
  }
  if (case_->type != FI_EP_MSG) {
    rc = fi_enable(side->ep);
    if (rc != 0) return CallFailed("fi_enable", rc);
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::BindCounters(Side* side) {
  constexpr uint64_t kFlags[] = {FI_SEND, FI_RECV, FI_READ, FI_WRITE,
                                 FI_REMOTE_READ, FI_REMOTE_WRITE};
  for (uint64_t flag : kFlags) {
    fi_cntr_attr attr = {};
    attr.events = FI_CNTR_EVENTS_COMP;
    absl::StatusOr<Cntr> cntr = OpenCntr(domain_, &attr);
    if (!cntr.ok()) return cntr.status();
    int rc = fi_ep_bind(side->ep, &(*cntr)->fid, flag);
    if (rc != 0) return CallFailed("fi_ep_bind(cntr)", rc);
    side->counters.push_back(std::move(*cntr));
  }
  return absl::OkStatus();
}

absl::Status EndpointPair::Connect() {
  int rc = fi_passive_ep(fabric_.get(), info_.get(), &pep_, nullptr);
  if (rc != 0) return CallFailed("fi_passive_ep", rc);
  rc = fi_pep_bind(pep_, &eq_b_->fid, 0);
  if (rc == 0) rc = fi_listen(pep_);
  if (rc != 0) return CallFailed("fi_listen", rc);
  char name[128];
  size_t len = sizeof(name);
  rc = fi_getname(&pep_->fid, name, &len);
  if (rc != 0) return CallFailed("fi_getname(pep)", rc);
  listen_name_.assign(name, len);
  // a connects to the passive endpoint's address.
  Info a_info = DupInfo(*info_);
  free(a_info->dest_addr);
  a_info->dest_addr = malloc(len);
  memcpy(a_info->dest_addr, name, len);
  a_info->dest_addrlen = len;
  Info saved = std::exchange(info_, std::move(a_info));
  absl::Status opened = OpenSide(&a_, 0, av_);
  info_ = std::move(saved);
  if (!opened.ok()) return opened;
  rc = fi_ep_bind(a_.ep, &eq_a_->fid, 0);
  if (rc == 0) rc = fi_enable(a_.ep);
  if (rc == 0) rc = fi_connect(a_.ep, name, nullptr, 0);
  if (rc != 0) return CallFailed("fi_connect", rc);
  fi_eq_cm_entry request;
  if (absl::Status s = WaitCmEvent(eq_b_, FI_CONNREQ, &request); !s.ok()) {
    return s;
  }
  Info accepted(request.info);
  saved = std::exchange(info_, std::move(accepted));
  opened = OpenSide(&b_, 0, av_);
  info_ = std::exchange(saved, nullptr);
  if (!opened.ok()) return opened;
  rc = fi_ep_bind(b_.ep, &eq_b_->fid, 0);
  if (rc == 0) rc = fi_enable(b_.ep);
  if (rc == 0) rc = fi_accept(b_.ep, nullptr, 0);
  if (rc != 0) return CallFailed("fi_accept", rc);
  fi_eq_cm_entry connected;
  if (absl::Status s = WaitCmEvent(eq_b_, FI_CONNECTED, &connected); !s.ok()) {
    return s;
  }
  return WaitCmEvent(eq_a_, FI_CONNECTED, &connected);
}

absl::StatusOr<fid_ep*> EndpointPair::ConnectOneMore(
    const std::string& name) {
  Info info = DupInfo(*info_);
  free(info->dest_addr);
  info->dest_addr = malloc(name.size());
  memcpy(info->dest_addr, name.data(), name.size());
  info->dest_addrlen = name.size();
  return OpenOneMore(info, eq_a_, a_.cq.get(), [&](fid_ep* ep) {
    return fi_connect(ep, name.data(), nullptr, 0);
  });
}

absl::StatusOr<fid_ep*> EndpointPair::AcceptOneMore(
    const std::function<void(fid_ep*)>& before_accept, fid_cq* cq) {
  fi_eq_cm_entry request;
  if (absl::Status s = WaitCmEvent(eq_b_, FI_CONNREQ, &request); !s.ok()) {
    return s;
  }
  Info accepted(request.info);
  fid_cq* bound = cq != nullptr ? cq : b_.cq.get();
  return OpenOneMore(accepted, eq_b_, bound, [&](fid_ep* ep) {
    before_accept(ep);
    return fi_accept(ep, nullptr, 0);
  });
}

absl::StatusOr<fid_ep*> EndpointPair::OpenOneMore(
    const Info& info, Eq& eq, fid_cq* cq,
    const std::function<int(fid_ep*)>& start) {
  fid_ep* ep = nullptr;
  int rc = fi_endpoint(domain_.get(), info.get(), &ep, nullptr);
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
  if (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) {
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
  absl::Status status;
  for (Side* side : {&a_, &b_}) {
    if (side->ep != nullptr) {
      int rc = fi_close(&side->ep->fid);
      if (rc != 0) status.Update(CallFailed("fi_close(ep)", rc));
      side->ep = nullptr;
    }
  }
  for (fid* idle : idle_) {
    int rc = fi_close(idle);
    if (rc != 0) status.Update(CallFailed("fi_close(idle endpoint)", rc));
  }
  idle_.clear();
  status.Update(idle_cq_.Close());
  if (pep_ != nullptr) {
    int rc = fi_close(&pep_->fid);
    if (rc != 0) status.Update(CallFailed("fi_close(pep)", rc));
    pep_ = nullptr;
  }
  for (fid* context : {srx_ != nullptr ? &srx_->fid : nullptr,
                       stx_ != nullptr ? &stx_->fid : nullptr}) {
    if (context == nullptr) continue;
    int rc = fi_close(context);
    if (rc != 0) status.Update(CallFailed("fi_close(shared context)", rc));
  }
  srx_ = nullptr;
  stx_ = nullptr;
  for (Side* side : {&a_, &b_}) {
    status.Update(side->mr.Close());
    status.Update(side->cq.Close());
    for (Cntr& cntr : side->counters) status.Update(cntr.Close());
    side->counters.clear();
  }
  status.Update(av_.Close());
  status.Update(av_b_.Close());
  status.Update(eq_a_.Close());
  status.Update(eq_b_.Close());
  status.Update(domain_.Close());
  status.Update(fabric_.Close());
  info_.reset();
  msg_info_.reset();
  if (case_ != nullptr && case_->tcp_shm != nullptr) unsetenv("FI_TCP_SHM");
  case_ = nullptr;
  return status;
}

void PairTest::TearDown() {
  absl::Status closed = pair_.Close();
  EXPECT_TRUE(closed.ok()) << closed;
}

absl::Status PairTest::OpenPair(const PairOptions& options) {
  return pair_.Open(GetParam(), options);
}

}  // namespace ofi::conformance

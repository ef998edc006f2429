// A ping-pong between two RDM endpoints of this process over tcp on the
// loopback interface, written with the C++ API's owning handles (ofi::).
// Every object is closed by its handle when it goes out of scope, children
// before parents, because they are declared after them. Every value that
// comes back is checked; exits 1 on any failure.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/cxx/av.h"
#include "fabric/api/cxx/cq.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/endpoint.h"
#include "fabric/api/cxx/fabric.h"

namespace {

constexpr int kRoundTrips = 1000;

// One endpoint and the CQ of its transmits and receives. The endpoint is
// declared last: it is closed before its CQ.
struct Side {
  ofi::Cq cq;
  ofi::Endpoint ep;
};

absl::StatusOr<Side> OpenSide(const ofi::Domain& domain, fi_info& info,
                              const ofi::Av& av) {
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(domain, cq_attr);
  if (!cq.ok()) return cq.status();
  absl::StatusOr<ofi::Endpoint> ep = ofi::OpenEnabledEndpoint(
      domain, info,
      {{&av.get()->fid, 0}, {&cq->get()->fid, FI_TRANSMIT | FI_RECV}});
  if (!ep.ok()) return ep.status();
  return Side{*std::move(cq), *std::move(ep)};
}

// Polls `cq` until a completion arrives: its entry.
absl::StatusOr<fi_cq_msg_entry> WaitOne(ofi::Cq& cq) {
  fi_cq_msg_entry entry = {};
  for (;;) {
    absl::StatusOr<size_t> n = cq.Read(absl::MakeSpan(&entry, 1));
    if (!n.ok()) return n.status();
    if (*n == 1) return entry;
  }
}

// Sends `value` from `from` to `to` (at AV address `dest`) and waits until
// it has arrived: the value received.
absl::StatusOr<uint64_t> Pass(Side& from, Side& to, fi_addr_t dest,
                              uint64_t value) {
  uint64_t received = 0;
  ssize_t rc = fi_recv(to.ep.get(), &received, sizeof(received), nullptr,
                       FI_ADDR_UNSPEC, nullptr);
  if (rc != 0) return ofi::ErrorStatus(static_cast<int>(rc), "fi_recv");
  rc = fi_inject(from.ep.get(), &value, sizeof(value), dest);
  if (rc != 0) return ofi::ErrorStatus(static_cast<int>(rc), "fi_inject");
  absl::StatusOr<fi_cq_msg_entry> entry = WaitOne(to.cq);
  if (!entry.ok()) return entry.status();
  if (entry->len != sizeof(received)) {
    return absl::DataLossError("a message of the wrong length arrived");
  }
  return received;
}

absl::Status Run() {
  ofi::Info hints = ofi::AllocInfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  absl::StatusOr<ofi::Info> info = ofi::GetInfo(hints.get());
  if (!info.ok()) return info.status();

  absl::StatusOr<ofi::Fabric> fabric = ofi::OpenFabric(*(*info)->fabric_attr);
  if (!fabric.ok()) return fabric.status();
  absl::StatusOr<ofi::Domain> domain = ofi::OpenDomain(*fabric, **info);
  if (!domain.ok()) return domain.status();
  fi_av_attr av_attr = {};
  av_attr.type = FI_AV_TABLE;
  absl::StatusOr<ofi::Av> av = ofi::OpenAv(*domain, av_attr);
  if (!av.ok()) return av.status();
  absl::StatusOr<Side> ping = OpenSide(*domain, **info, *av);
  if (!ping.ok()) return ping.status();
  absl::StatusOr<Side> pong = OpenSide(*domain, **info, *av);
  if (!pong.ok()) return pong.status();

  // Each side's address in the AV.
  fi_addr_t to[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::vector<char>> name =
        ofi::GetName(i == 0 ? ping->ep : pong->ep);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::vector<fi_addr_t>> added = av->Insert(name->data(), 1);
    if (!added.ok()) return added.status();
    to[i] = (*added)[0];
  }

  for (uint64_t i = 0; i < kRoundTrips; ++i) {
    absl::StatusOr<uint64_t> there = Pass(*ping, *pong, to[1], i);
    if (!there.ok()) return there.status();
    absl::StatusOr<uint64_t> back = Pass(*pong, *ping, to[0], *there + 1);
    if (!back.ok()) return back.status();
    if (*back != i + 1) return absl::DataLossError("a wrong value came back");
  }
  std::printf("%d round trips over %s, every value checked\n", kRoundTrips,
              (*info)->fabric_attr->prov_name);
  return absl::OkStatus();
}

}  // namespace

int main() {
  absl::Status status = Run();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}

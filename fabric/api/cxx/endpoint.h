// File: fabric/api/cxx/endpoint.h
//
// An endpoint (fi_endpoint(3)) as an owning handle, with the calls that
// set it up: bind its CQs, counters, AV and EQ, enable it, read its
// address. Data moves with the C calls on get() (fi_send, fi_recv, ...):
// their arguments are the ABI's, and a wrapper would only copy them.
//
// Example: an RDM endpoint ready for messages.
//
//   absl::StatusOr<ofi::Endpoint> ep = ofi::OpenEnabledEndpoint(
//       domain, *info,
//       {{&av.get()->fid, 0}, {&cq.get()->fid, FI_TRANSMIT | FI_RECV}});
//   if (!ep.ok()) return ep.status();
//   absl::StatusOr<std::vector<char>> name = ofi::GetName(*ep);
//   ...
//   ssize_t rc = fi_send(ep->get(), buf, len, nullptr, peer, context);
#ifndef FABRIC_API_CXX_ENDPOINT_H_
#define FABRIC_API_CXX_ENDPOINT_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

// Close it before the CQs, counters, AV and EQ bound to it, and before its
// domain: declare it after them.
using Endpoint = Handle<fid_ep>;

// fi_endpoint on `domain` for `info`, an entry returned by GetInfo for it.
absl::StatusOr<Endpoint> OpenEndpoint(const Domain& domain, fi_info& info,
                                      void* context = nullptr);

// fi_ep_bind of `object` (a CQ, counter, AV or EQ) with `flags` (FI_TRANSMIT,
// FI_RECV, FI_SELECTIVE_COMPLETION, ...).
absl::Status Bind(const Endpoint& ep, fid* object, uint64_t flags);

// fi_enable: after the binds its type needs (an RDM endpoint: an AV and its
// CQs).
absl::Status Enable(const Endpoint& ep);

// fi_getname: the endpoint's address, as peers insert it into their AVs.
absl::StatusOr<std::vector<char>> GetName(const Endpoint& ep);

// An object to bind and the flags of its fi_ep_bind.
struct Binding {
  fid* object;
  uint64_t flags;
};

// OpenEndpoint, Bind of each of `bindings` in order, then Enable: the
// endpoint, ready for data; the first failure otherwise.
absl::StatusOr<Endpoint> OpenEnabledEndpoint(
    const Domain& domain, fi_info& info,
    std::initializer_list<Binding> bindings, void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_ENDPOINT_H_

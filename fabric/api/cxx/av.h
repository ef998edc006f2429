// File: fabric/api/cxx/av.h
//
// An address vector (fi_av(3)) as an owning handle: the table that maps
// peers' addresses to the fi_addr_t values connectionless endpoints send
// to. It belongs to a domain and must be closed before it (and after the
// endpoints bound to it).
//
// Example: insert a peer's name (from its fi_getname) and send to it.
//
//   absl::StatusOr<ofi::Av> av = ofi::OpenAv(*domain, attr);
//   absl::StatusOr<std::vector<fi_addr_t>> peers = av->Insert(name, 1);
//   if (!peers.ok()) return peers.status();
//   fi_send(ep, buf, len, desc, (*peers)[0], context);
#ifndef FABRIC_API_CXX_AV_H_
#define FABRIC_API_CXX_AV_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi {

class Av : public Handle<fid_av> {
 public:
  using Handle::Handle;

  // fi_av_insert of `count` addresses packed at `addrs` in the domain's
  // address format. Their fi_addr_t values in order; an error status when
  // any address is refused (fi_av_insert inserts the others: their values
  // are lost with the status, so insert one at a time to keep them).
  absl::StatusOr<std::vector<fi_addr_t>> Insert(const void* addrs,
                                                size_t count,
                                                uint64_t flags = 0);

  // fi_av_lookup: the address `fi_addr` stands for, as inserted.
  absl::StatusOr<std::vector<char>> Lookup(fi_addr_t fi_addr) const;

  // fi_av_remove.
  absl::Status Remove(absl::Span<const fi_addr_t> fi_addrs);

  // fi_av_straddr: the address at `addr` as text ("fi_sockaddr_in://...").
  std::string ToString(const void* addr) const;
};

absl::StatusOr<Av> OpenAv(const Domain& domain, const fi_av_attr& attr,
                          void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_AV_H_

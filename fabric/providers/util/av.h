// File: fabric/providers/util/av.h
//
// The address vector of the IP providers (fi_av(3)): FI_AV_MAP and
// FI_AV_TABLE (both hand out consecutive indices; removed ones are not
// reused), fi_av_insert for the domain's address format (FI_SOCKADDR,
// FI_SOCKADDR_IN, FI_SOCKADDR_IN6, or packed NUL-terminated FI_ADDR_STR
// strings), insertsvc, insertsym, remove, lookup, straddr, FI_AV_USER_ID,
// FI_SYNC_ERR, and asynchronous inserts (FI_EVENT: FI_AV_COMPLETE on the
// bound EQ). Named (shared) AVs and fi_av_set are not implemented yet
// (-FI_ENOSYS). Providers translate fi_addr_t with AvLookupIp and back with
// AvFindIp.
#ifndef FABRIC_PROVIDERS_UTIL_AV_H_
#define FABRIC_PROVIDERS_UTIL_AV_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/util/domain.h"
#include "fabric/providers/util/eq.h"

namespace fabric {

struct AvEntry {
  IpAddress address;
  fi_addr_t user_id;  // FI_AV_USER_ID, else the entry's own fi_addr_t
};

struct UtilAv {
  fid_av av_fid;  // first: the application's fid_av* is this
  UtilDomain* domain;
  fi_av_type type;
  uint32_t addr_format;
  uint64_t flags;         // fi_av_attr::flags
  UtilEq* eq = nullptr;   // bound for FI_EVENT
  std::mutex mutex;       // guards entries and index
  std::vector<std::optional<AvEntry>> entries;  // by fi_addr_t
  std::map<std::string, fi_addr_t> index;       // address key -> fi_addr_t
  std::atomic<int> open_children{0};
};

// The UtilAv behind `object`, or null when it is not one of our AVs.
UtilAv* AsUtilAv(fid* object);

// fi_ops_domain::av_open of UtilDomain.
int OpenUtilAv(fid_domain* domain, fi_av_attr* attr, fid_av** av,
               void* context);

// The address of `fi_addr`; FI_EINVAL status when it names no entry.
absl::StatusOr<IpAddress> AvLookupIp(UtilAv* av, fi_addr_t fi_addr);

// The fi_addr_t of `address` (FI_SOURCE), or FI_ADDR_NOTAVAIL.
fi_addr_t AvFindIp(UtilAv* av, const IpAddress& address);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_AV_H_

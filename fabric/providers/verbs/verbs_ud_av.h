// File: fabric/providers/verbs/verbs_ud_av.h
//
// The address vector of verbs datagram endpoints: UD endpoint names
// (FI_ADDR_IB_UD, verbs_ud_attr.h), each with the address handle (ibv_ah)
// its sends go through, made by fi_av_insert on the domain's first ACTIVE
// port. fi_addr_t values are indices in insertion order (FI_AV_MAP and
// FI_AV_TABLE alike; removed ones are not reused). fi_av_insert takes
// FI_MORE, FI_SYNC_ERR, FI_AV_USER_ID and FI_EVENT as every AV of ours does
// (util/av.h); fi_av_remove, fi_av_lookup and fi_av_straddr work;
// fi_av_insertsvc and fi_av_insertsym (a UD name is no node and service),
// named AVs and AV sets are -FI_ENOSYS.
//
// Every address handle has a GRH (is_global), which RoCE needs and
// InfiniBand accepts within a subnet, so every receive carries its
// sender's GID: FI_SOURCE finds the sender by GID and queue pair number.
#ifndef FABRIC_PROVIDERS_VERBS_VERBS_UD_AV_H_
#define FABRIC_PROVIDERS_VERBS_VERBS_UD_AV_H_

#include <infiniband/verbs.h>
#include <rdma/fi_domain.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "fabric/providers/util/av.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/verbs/verbs_domain.h"
#include "fabric/providers/verbs/verbs_ud_attr.h"

namespace fabric {
namespace verbs {

// The port UD queue pairs and address handles of a domain use: its
// device's first ACTIVE port.
struct UdPort {
  uint8_t number = 1;
  ibv_gid gid = {};  // index 0
  uint16_t lid = 0;
  int active_mtu = 0;  // enum ibv_mtu
};

// FI_ENODATA when the device has no ACTIVE port with a known MTU.
absl::StatusOr<UdPort> FindUdPort(const VerbsDomain& domain);

// Where a send to one peer goes.
struct UdDestination {
  ibv_ah* ah = nullptr;
  uint32_t qpn = 0;
  uint32_t qkey = 0;
};

struct UdPeer {
  UdName name;
  UdDestination destination;
  fi_addr_t user_id;  // FI_AV_USER_ID, else the entry's own fi_addr_t
};

struct VerbsUdAv {
  UtilAv util;  // first: the application's fid_av* is this
  VerbsDomain* verbs = nullptr;
  UdPort port;
  // By fi_addr_t.
  std::vector<std::optional<UdPeer>> peers ABSL_GUARDED_BY(util.mutex);
  // SenderKey -> the entries of that name (FI_SOURCE reports the first).
  std::map<std::string, std::set<fi_addr_t>> by_sender
      ABSL_GUARDED_BY(util.mutex);
  // Handles of removed entries, destroyed at close where another thread
  // may be sending with one (every threading model but FI_THREAD_DOMAIN
  // lets a thread remove entries while another sends through the AV),
  // else at once.
  std::vector<ibv_ah*> removed_ahs;
};
FABRIC_BEGINS_WITH(VerbsUdAv, util);

// fi_av_open on a verbs datagram domain.
int OpenVerbsUdAv(fid_domain* domain, fi_av_attr* attr, fid_av** av,
                  void* context);

// The VerbsUdAv behind `object`, or null when it is not one.
VerbsUdAv* AsVerbsUdAv(fid* object);

// Where a send to `fi_addr` goes; FI_EINVAL when it names no entry.
absl::StatusOr<UdDestination> UdDestinationOf(VerbsUdAv* av,
                                              fi_addr_t fi_addr);

// The fi_addr_t (or FI_AV_USER_ID id) of the endpoint that sent from queue
// pair `qpn` with GID `gid`; FI_ADDR_NOTAVAIL when it is not in the AV.
fi_addr_t UdSenderOf(VerbsUdAv* av, const ibv_gid& gid, uint32_t qpn);

}  // namespace verbs
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_VERBS_VERBS_UD_AV_H_

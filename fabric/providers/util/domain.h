// File: fabric/providers/util/domain.h
//
// The domain object shared by all providers (fi_domain(3)). fi_domain checks
// the fi_info it is given the way fi_getinfo would (the provider must offer
// that domain on the fabric, and every attribute must be met) and keeps the
// resulting attributes. It counts the objects opened on it, so fi_close
// returns -FI_EBUSY while any is open, and holds its fabric open.
// Endpoints are opened by the domain's provider (Provider::OpenEndpoint),
// fi_query_atomic is answered by it (Provider::QueryAtomic); scalable
// endpoints, shared contexts and collective queries return -FI_ENOSYS.
#ifndef FABRIC_PROVIDERS_UTIL_DOMAIN_H_
#define FABRIC_PROVIDERS_UTIL_DOMAIN_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "fabric/api/core/info.h"
#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/domain_resources.h"
#include "fabric/providers/util/eq.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/fid_cast.h"

namespace fabric {

struct UtilMr;

struct UtilDomain {
  fid_domain domain_fid;  // first: the application's fid_domain* is this
  UtilFabric* fabric;
  std::string name;
  InfoPtr info;  // the attributes in effect
  std::atomic<int> open_children{0};
  std::atomic<int> cq_count{0};    // checked against domain_attr->cq_cnt
  std::atomic<int> cntr_count{0};  // and against cntr_cnt
  std::atomic<size_t> ep_count{0};  // and against ep_cnt
  // Open memory regions by key (their number is checked against mr_cnt).
  std::mutex mr_mutex;
  std::unordered_map<uint64_t, UtilMr*> mrs;
  // Every copy between provider buffers and the application's goes through
  // it: the built-in memory interfaces, or the application's
  // FI_SET_OPS_HMEM_OVERRIDE functions.
  HmemCopier copier;
  // Bound with fi_domain_bind; with FI_REG_MR, memory registrations
  // complete there asynchronously.
  UtilEq* eq = nullptr;
  uint64_t eq_flags = 0;
  // Held while a provider applies an incoming atomic operation to this
  // domain's memory: atomics are atomic with respect to each other (not to
  // RMA writes or the application's own accesses).
  std::mutex atomic_mutex;
  // Advances the data path of the domain's endpoints: reads and waits on
  // the domain's CQs, counters and poll sets run it, so under
  // FI_THREAD_DOMAIN no call on another domain (or on a fabric-level EQ)
  // touches this domain's endpoints.
  // Shared: an EQ that endpoints of the domain are bound to runs it too.
  std::shared_ptr<ProgressEngine> progress = std::make_shared<ProgressEngine>();
  // Opened with fi_domain2(FI_PEER) (fi_peer(3), "PEER DOMAIN"): the
  // owner's domain, one of ours, kept open meanwhile (it counts this one in
  // open_children). The peer domain shares the owner's progress engine (the
  // owner's CQ reads and waits advance the peer's endpoints), and the
  // owner's objects serve it (ServesDomain): its endpoints may bind the
  // owner's AV (they then address peers by the owner's fi_addr_t values)
  // and counters, and transmits may name the owner's memory regions as
  // local descriptors; remote accesses to its endpoints may name them too
  // (MrResolveRemote).
  UtilDomain* peer_owner = nullptr;
  // The provider's, when it keeps any (DomainResources); null otherwise.
  std::unique_ptr<DomainResources> resources;
};
FABRIC_BEGINS_WITH(UtilDomain, domain_fid);

// Whether objects of `object_domain` (AVs, counters, memory regions) may
// serve `domain`: they are its own, or `domain` is a peer domain of theirs.
inline bool ServesDomain(const UtilDomain* object_domain,
                         const UtilDomain& domain) {
  return object_domain == &domain ||
         (domain.peer_owner != nullptr && object_domain == domain.peer_owner);
}

// Whether the application serializes every call on the domain's objects
// (FI_THREAD_DOMAIN) and no thread of ours advances them (manual data and
// control progress): the domain's endpoints then run without locks. Not
// under FI_THREAD_COMPLETION or FI_THREAD_ENDPOINT: there two threads may
// each drive an endpoint and CQ of their own, and a CQ read advances every
// endpoint of the domain (its engine).
bool AppSerializesDomain(const fi_domain_attr& attr);

// The UtilDomain behind `object`, or null when it is not one of our
// domains.
UtilDomain* AsUtilDomain(fid* object);

// fi_ops_fabric::domain2 (and ::domain, with flags 0) of UtilFabric.
int OpenUtilDomain(fid_fabric* fabric, fi_info* info, fid_domain** domain,
                   uint64_t flags, void* context);

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_DOMAIN_H_

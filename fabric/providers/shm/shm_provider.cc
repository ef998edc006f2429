#include "fabric/providers/shm/shm_provider.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_connection.h"
#include "fabric/providers/shm/shm_names.h"
#include "fabric/providers/shm/shm_rdm_ep.h"
#include "fabric/providers/shm/shm_reclaim.h"
#include "fabric/providers/shm/shm_requests.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/stream/stream_attr.h"
#include "fabric/providers/stream/stream_provider.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/util/ip_discovery.h"
#include "fabric/providers/util/provider_setting.h"

namespace fabric {
namespace {

constexpr uint32_t kShmVersion = FI_VERSION(118, 0);
constexpr char kShmName[] = "shm";

// The loopback addresses endpoints are named in, as one "interface".
std::vector<IpInterface> ShmInterfaces() {
  std::vector<IpInterface> interfaces;
  sockaddr_in in = {};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sockaddr_in6 in6 = {};
  in6.sin6_family = AF_INET6;
  in6.sin6_addr = in6addr_loopback;
  const std::pair<const sockaddr*, socklen_t> addresses[] = {
      {reinterpret_cast<const sockaddr*>(&in), sizeof(in)},
      {reinterpret_cast<const sockaddr*>(&in6), sizeof(in6)}};
  for (const auto& [sa, len] : addresses) {
    absl::StatusOr<IpAddress> address = IpAddress::FromSockaddr(sa, len);
    if (!address.ok()) continue;
    interfaces.push_back(IpInterface{kShmName, *address, 0, kShmName, true});
  }
  return interfaces;
}

// FI_SHM_RING_SIZE.
constexpr SizeSetting kRingSize = {
    "ring_size", shm::kDefaultRingCapacity,
    "Bytes of each ring of a connection: a power of two from 4096 to "
    "67108864"};
// FI_SHM_CMA.
constexpr BoolSetting kCrossMemory = {
    "cma", true,
    "Copy large messages straight from the sender's memory with "
    "cross-memory attach (process_vm_readv) where the processes allow it"};

class ShmProvider : public stream::OnStreamEngine<Provider> {
 public:
  ShmProvider() : OnStreamEngine(kShmName, kShmVersion) {
    stream::DescribeStreamEndpoint(FI_EP_RDM, &rdm_);
    rdm_.ep.protocol = FI_PROTO_SHM;
    rdm_.domain.caps = (rdm_.domain.caps & ~FI_REMOTE_COMM) | FI_LOCAL_COMM;
    rdm_.info.caps = (rdm_.info.caps & ~FI_REMOTE_COMM) | FI_LOCAL_COMM;
    rdm_.tx.inject_size = 4096;
    kRingSize.Define(*this);
    kCrossMemory.Define(*this);
  }

  int default_priority() const override { return 90; }

  InfoPtr DefaultInfo() const override { return NamedCopy(rdm_.info); }

  absl::StatusOr<InfoList> Discover(
      const GetInfoRequest& request) const override {
    ReclaimOnce();
    size_t needed =
        shm::EndpointSegmentSize() + shm::ConnectionSegmentSize(RingSize());
    absl::Status space = shm::SpaceCheck(needed);
    if (!space.ok()) {
      return FiError(FI_ENODATA,
                     absl::StrCat("shm: /dev/shm cannot hold an endpoint "
                                  "and a connection: ",
                                  space.message()));
    }
    return DiscoverIp(*this, request, ShmInterfaces(), {&rdm_.info});
  }

  int OpenFabric(const fi_fabric_attr& attr, fid_fabric** fabric,
                 void* context) const override {
    if (attr.name == nullptr || std::string(attr.name) != kShmName) {
      FI_WARN(c_provider(), FI_LOG_FABRIC, "no fabric named '%s'\n",
              attr.name == nullptr ? "(null)" : attr.name);
      return -FI_ENODATA;
    }
    return OpenUtilFabric(*this, attr, fabric, context);
  }

  int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                   uint64_t flags, void* context) const override {
    if (EnumValue(info->ep_attr->type) != FI_EP_RDM) {
      FI_WARN(c_provider(), FI_LOG_EP_CTRL,
              "fi_endpoint: shm opens FI_EP_RDM endpoints\n");
      return -FI_EINVAL;
    }
    return shm::OpenShmRdmEp(domain, info, ep, context,
                             {RingSize(), CrossMemory()});
  }

 private:
  // FI_SHM_RING_SIZE: the default when unset or not a size, and when not a
  // power of two in range (logged).
  size_t RingSize() const {
    size_t size = kRingSize.Get(*this);
    if (size < shm::kMinRingCapacity || size > shm::kMaxRingCapacity ||
        (size & (size - 1)) != 0) {
      FI_WARN(c_provider(), FI_LOG_CORE,
              "FI_SHM_RING_SIZE=%zu is not a power of two from %zu to %zu; "
              "using %zu\n",
              size, shm::kMinRingCapacity, shm::kMaxRingCapacity,
              shm::kDefaultRingCapacity);
      return shm::kDefaultRingCapacity;
    }
    return size;
  }

  bool CrossMemory() const { return kCrossMemory.Get(*this); }

  // Segments left by processes that died, once per process.
  void ReclaimOnce() const {
    std::call_once(reclaimed_, [this] {
      for (const char* prefix :
           {shm::kEndpointSegmentPrefix, shm::kConnectionSegmentPrefix,
            shm::kLivenessPrefix}) {
        absl::StatusOr<int> removed = shm::ReclaimStale(prefix);
        if (removed.ok() && *removed > 0) {
          FI_INFO(c_provider(), FI_LOG_CORE,
                  "removed %d segments of dead processes (%s-*)\n", *removed,
                  prefix);
        }
      }
    });
  }

  InfoTemplate rdm_;
  mutable std::once_flag reclaimed_;
};

}  // namespace

std::unique_ptr<Provider> MakeShmProvider() {
  return std::make_unique<ShmProvider>();
}

}  // namespace fabric

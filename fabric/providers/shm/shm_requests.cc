#include "fabric/providers/shm/shm_requests.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_names.h"
#include "fabric/providers/shm/shm_process.h"

namespace fabric {
namespace shm {
namespace {

EndpointArea* AreaOf(const Segment& segment) {
  return static_cast<EndpointArea*>(segment.payload());
}

// Removes the segment `name` when the process that made it is gone; true
// when it did.
bool RemoveIfStale(const std::string& name) {
  if (IsSegmentInUse(name)) return false;
  return shm_unlink(name.c_str()) == 0;
}

}  // namespace

size_t EndpointSegmentSize() {
  return kSegmentPayloadOffset + sizeof(EndpointArea);
}

absl::StatusOr<RequestTable> RequestTable::Create(const IpAddress& address,
                                                  std::string_view scope) {
  std::string name = EndpointSegmentName(address, scope);
  absl::StatusOr<Segment> segment =
      Segment::Create(name, EndpointSegmentSize());
  if (!segment.ok() && ToFiErrno(segment.status()) == -EEXIST &&
      RemoveIfStale(name)) {
    segment = Segment::Create(name, EndpointSegmentSize());
  }
  if (!segment.ok()) {
    if (ToFiErrno(segment.status()) == -EEXIST) {
      return FiError(FI_EADDRINUSE,
                     absl::StrCat("shm address ", FormatAddrStr(address),
                                  " is taken by a live endpoint"));
    }
    return segment.status();
  }
  // A new segment reads as zeros: every slot kFree, nothing posted.
  EndpointArea* area = AreaOf(*segment);
  absl::StatusOr<uint64_t> network = OwnNetworkNamespace();
  if (!network.ok()) return network.status();
  area->network_namespace = *network;
  return RequestTable(*std::move(segment), area);
}

std::vector<std::string> RequestTable::Take(size_t* malformed) {
  *malformed = 0;
  seen_ = area_->posted.load(std::memory_order_acquire);
  std::vector<std::string> names;
  for (RequestSlot& slot : area_->slots) {
    if (slot.state.load(std::memory_order_acquire) != kPosted) continue;
    char name[kSegmentNameMax];
    memcpy(name, slot.connection, sizeof(name));
    slot.state.store(kFree, std::memory_order_release);
    if (memchr(name, '\0', sizeof(name)) == nullptr) {
      ++*malformed;
      continue;
    }
    names.emplace_back(name);
  }
  return names;
}

bool RequestTable::PrepareToSleep() {
  area_->sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return !HasRequests();
}

absl::Status PostRequest(const Segment& peer, const std::string& connection,
                         bool* wake) {
  *wake = false;
  if (connection.size() >= kSegmentNameMax) {
    return FiError(FI_EINVAL, "connection segment name too long");
  }
  if (peer.payload_size() < sizeof(EndpointArea)) {
    return FiError(FI_EINVAL, absl::StrCat("segment ", peer.name(),
                                           " is too small for an endpoint"));
  }
  EndpointArea* area = AreaOf(peer);
  absl::StatusOr<uint64_t> network = OwnNetworkNamespace();
  if (!network.ok()) return network.status();
  if (area->network_namespace != *network) {
    return FiError(FI_ECONNREFUSED,
                   absl::StrCat("the endpoint of ", peer.name(),
                                " is in another network namespace, where its "
                                "doorbell cannot be rung"));
  }
  for (RequestSlot& slot : area->slots) {
    uint32_t expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kFilling,
                                            std::memory_order_acquire)) {
      continue;
    }
    memcpy(slot.connection, connection.c_str(), connection.size() + 1);
    slot.state.store(kPosted, std::memory_order_release);
    area->posted.fetch_add(1, std::memory_order_seq_cst);
    *wake = area->sleeping.load(std::memory_order_relaxed) != 0 &&
            area->sleeping.exchange(0) != 0;
    return absl::OkStatus();
  }
  return FiError(FI_EAGAIN, "the peer's request slots are all taken");
}

}  // namespace shm
}  // namespace fabric

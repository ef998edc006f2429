// File: fabric/providers/shm/shm_requests.h
//
// The connection requests of shm endpoints (shm_layout.h): the endpoint's
// own segment, where peers post the names of the connection segments they
// made, and the posting side.
#ifndef FABRIC_PROVIDERS_SHM_SHM_REQUESTS_H_
#define FABRIC_PROVIDERS_SHM_SHM_REQUESTS_H_

#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/shm/shm_layout.h"
#include "fabric/providers/shm/shm_segment.h"

namespace fabric {
namespace shm {

// The bytes an endpoint segment takes.
size_t EndpointSegmentSize();

class RequestTable {
 public:
  // Creates the segment of the endpoint at `address`; one left by a
  // process that died is removed first. FI_EADDRINUSE while a live endpoint
  // has the address.
  static absl::StatusOr<RequestTable> Create(const IpAddress& address,
                                             std::string_view scope);

  // Whether requests were posted since the last Take.
  bool HasRequests() const {
    return area_->posted.load(std::memory_order_acquire) != seen_;
  }
  // The connection segment names posted since the last call; their slots
  // are free again. Slots without a NUL-terminated name are dropped and
  // counted in *malformed.
  std::vector<std::string> Take(size_t* malformed);
  // Asks posters to ring the doorbell; false when requests wait already.
  bool PrepareToSleep();
  void Awake() { area_->sleeping.store(0, std::memory_order_relaxed); }

 private:
  RequestTable(Segment segment, EndpointArea* area)
      : segment_(std::move(segment)), area_(area) {}

  Segment segment_;
  EndpointArea* area_;
  uint64_t seen_ = 0;
};

// Posts the connection segment `connection` to the endpoint segment `peer`
// (opened). FI_EAGAIN when its slots are all taken, FI_ECONNREFUSED when
// the endpoint is in another network namespace; *wake is set when the
// endpoint sleeps and must have its doorbell rung.
absl::Status PostRequest(const Segment& peer, const std::string& connection,
                         bool* wake);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_REQUESTS_H_

// File: fabric/providers/shm/shm_connection.h
//
// Making and taking connection segments (shm_layout.h). The connector
// makes one with both rings empty, its address and authorization key, and
// posts its name to the peer's endpoint segment; the acceptor checks it
// (sizes, address, key: the segment is another process's writing), sets
// kAccepted or kRefused, rings the connector's doorbell and unlinks the
// name, after which the two mappings are all that is left of it.
#ifndef FABRIC_PROVIDERS_SHM_SHM_CONNECTION_H_
#define FABRIC_PROVIDERS_SHM_SHM_CONNECTION_H_

#include <stdint.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/shm/shm_doorbell.h"
#include "fabric/providers/shm/shm_ring_stream.h"

namespace fabric {
namespace shm {

// Each ring's data bytes unless configured (FI_SHM_RING_SIZE).
inline constexpr size_t kDefaultRingCapacity = 64 * 1024;
inline constexpr size_t kMinRingCapacity = 4096;
inline constexpr size_t kMaxRingCapacity = size_t{1} << 26;

// The bytes a connection segment with rings of `ring_capacity` takes.
size_t ConnectionSegmentSize(size_t ring_capacity);

// A new connection segment from the endpoint at `own` (authorization key
// `key`) to the one at `peer`, both in `scope` (shm_names.h), not yet
// posted: its stream writes ring 0.
absl::StatusOr<std::unique_ptr<RingStream>> MakeConnection(
    const IpAddress& own, const std::string& key, size_t ring_capacity,
    const Doorbell* doorbell, const IpAddress& peer, std::string_view scope);

// A connection taken from a request.
struct AcceptedConnection {
  std::unique_ptr<RingStream> stream;  // writes ring 1
  IpAddress connector;
};

// Takes the connection segment `name` posted to an endpoint in `scope`
// whose authorization key is `key`: accepts it, or refuses it (FI_EKEYREJECTED
// for another key, FI_EINVAL for a malformed segment, telling the
// connector when it can).
// With `cross_memory`, it also tries to copy the connector's memory
// (RingStream::ProbePeer) before it answers.
absl::StatusOr<AcceptedConnection> TakeConnection(const std::string& name,
                                                  const std::string& key,
                                                  const Doorbell* doorbell,
                                                  bool cross_memory,
                                                  std::string_view scope);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_CONNECTION_H_

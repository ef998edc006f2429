// File: fabric/providers/shm/shm_names.h
//
// Names an shm endpoint is found by. An endpoint's address is an IP socket
// address (127.0.0.1 or ::1 with a port-like number the provider picks, or
// the address a tcp endpoint listens on when tcp uses shm as its peer for
// local processes); it names the endpoint's segment and doorbell. Both
// carry the user id, so users never see each other's endpoints, and the
// segment the network namespace (the inode of /proc/self/ns/net): an
// address means something only inside one, and containers that share
// /dev/shm but not a network may each have an endpoint at 127.0.0.1:5000,
// or at the same address of their own interfaces; each reaches its own.
// (A doorbell, an abstract socket, belongs to its namespace anyway.) Both
// carry the endpoint's scope: "" for the shm provider's own endpoints, the owner
// provider's name ("tcp") for those of a peer domain, so an owner's local
// path never reaches an application's shm endpoint that happens to have
// the same address, nor the other way round.
#ifndef FABRIC_PROVIDERS_SHM_SHM_NAMES_H_
#define FABRIC_PROVIDERS_SHM_SHM_NAMES_H_

#include <string>
#include <string_view>

#include "fabric/api/core/address.h"

namespace fabric {
namespace shm {

// The prefix of endpoint segment names (for ReclaimStale).
inline constexpr char kEndpointSegmentPrefix[] = "/fabric-shmep";
// The prefix of connection segment names (SegmentName's).
inline constexpr char kConnectionSegmentPrefix[] = "/fabric-shmc";

// "/fabric-shmep-<uid>-<netns>-<host>-<port>", or with a scope
// "/fabric-shmep-<uid>-<netns>-<scope>-<host>-<port>".
std::string EndpointSegmentName(const IpAddress& address,
                                std::string_view scope);
// "fabric-shm-<uid>[-<scope>]-<host>-<port>": an abstract socket name.
std::string DoorbellName(const IpAddress& address, std::string_view scope);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_NAMES_H_

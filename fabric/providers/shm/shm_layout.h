// File: fabric/providers/shm/shm_layout.h
//
// What the shm provider's segments hold after their header
// (shm_segment_header.h). Both kinds are written by one process and read by
// another, so a reader validates what it uses.
//
// - An endpoint segment (one per endpoint, named after the endpoint's
//   address: shm_names.h) is where peers ask for connections: a table of
//   request slots. A connector claims a free slot (kFree -> kFilling with a
//   CAS), writes the name of the connection segment it made, publishes it
//   (kPosted, release) and bumps `posted`; the endpoint takes posted slots
//   back to kFree.
// - A connection segment (made by the connector, unlinked by the acceptor
//   once both have mapped it) holds two byte rings, ring 0 from connector to
//   acceptor and ring 1 back, and the handshake: the connector's address and
//   authorization key, and `state`, which the acceptor sets to kAccepted or
//   kRefused.
//
// Large messages skip the rings when the peers can copy each other's
// memory: each side publishes a probe word and its address, and the other
// side tries to read it with process_vm_readv (shm_ring_stream.h).
//
// Readers sleep without spinning through `sleeping` flags: a reader about to
// block sets its flag and checks its input again; a writer that finds the
// flag set after writing clears it and rings the reader's doorbell
// (shm_doorbell.h). `backlogged` does the same for a writer waiting for room.
#ifndef FABRIC_PROVIDERS_SHM_SHM_LAYOUT_H_
#define FABRIC_PROVIDERS_SHM_SHM_LAYOUT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <atomic>

#include "fabric/providers/stream/byte_stream.h"

namespace fabric {
namespace shm {

inline constexpr size_t kRequestSlots = 64;
inline constexpr size_t kSegmentNameMax = 96;  // with the NUL
inline constexpr size_t kAuthKeyMax = 64;

enum RequestState : uint32_t { kFree = 0, kFilling = 1, kPosted = 2 };

struct RequestSlot {
  std::atomic<uint32_t> state;
  char connection[kSegmentNameMax];  // NUL-terminated once kPosted
};

struct EndpointArea {
  std::atomic<uint32_t> sleeping;  // the endpoint asked for a doorbell
  std::atomic<uint64_t> posted;    // requests ever posted
  // The endpoint's network namespace (inode): its doorbell, an abstract
  // socket, is reachable only from there.
  uint64_t network_namespace;
  RequestSlot slots[kRequestSlots];
};

enum ConnectionState : uint32_t { kOffered = 0, kAccepted = 1, kRefused = 2 };

struct alignas(64) ConnectionArea {
  std::atomic<uint32_t> state;  // ConnectionState
  uint32_t ring_capacity;       // each ring's data bytes, a power of two
  uint32_t connector_address_len;
  uint32_t key_size;
  sockaddr_storage connector_address;  // the connector endpoint's address
  char key[kAuthKeyMax];
  std::atomic<uint32_t> sleeping[2];    // the reader of ring i sleeps
  std::atomic<uint32_t> backlogged[2];  // the writer of ring i waits
  // Cross-memory attach, side 0 the connector, side 1 the acceptor: side
  // i's pid (in its pid namespace), where its probe word lies in its own
  // memory, the word's value, and whether side i can copy the other side's
  // memory (it read the other's probe word with process_vm_readv).
  int32_t pid[2];
  uint64_t pid_ns[2];
  uint64_t probe_address[2];
  uint64_t probe_word[2];
  std::atomic<uint32_t> can_pull[2];
  // The copy jobs of large messages in ring i (stream::CopyShare), each on a
  // cache line of its own.
  struct alignas(64) Share {
    stream::CopyShare share;
  };
  Share copy[2];
};

// Where the rings of a connection segment start, from its payload.
inline constexpr size_t kRingsOffset = sizeof(ConnectionArea);

static_assert(std::atomic<uint64_t>::is_always_lock_free);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_LAYOUT_H_

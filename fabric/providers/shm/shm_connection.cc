#include "fabric/providers/shm/shm_connection.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/mman.h>

#include <atomic>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/shm/shm_names.h"

namespace fabric {
namespace shm {
namespace {

ConnectionArea* AreaOf(const Segment& segment) {
  return static_cast<ConnectionArea*>(segment.payload());
}

char* RingMemory(const Segment& segment, size_t ring_capacity, int index) {
  return static_cast<char*>(segment.payload()) + kRingsOffset +
         index * ByteRing::BytesNeeded(ring_capacity);
}

// Numbers for this process's connection segment names. They start at a
// random value: processes in different pid namespaces (containers, test
// sandboxes sharing /dev/shm) can have the same pid, which names carry.
uint64_t NextConnectionNumber() {
  static std::atomic<uint64_t> next{[] {
    std::random_device random;
    return (static_cast<uint64_t>(random()) << 32) ^ random();
  }()};
  return next.fetch_add(1);
}

bool ValidCapacity(uint64_t capacity) {
  return capacity >= kMinRingCapacity && capacity <= kMaxRingCapacity &&
         (capacity & (capacity - 1)) == 0;
}

}  // namespace

size_t ConnectionSegmentSize(size_t ring_capacity) {
  return kSegmentPayloadOffset + kRingsOffset +
         2 * ByteRing::BytesNeeded(ring_capacity);
}

absl::StatusOr<std::unique_ptr<RingStream>> MakeConnection(
    const IpAddress& own, const std::string& key, size_t ring_capacity,
    const Doorbell* doorbell, const IpAddress& peer, std::string_view scope) {
  if (!ValidCapacity(ring_capacity) || key.size() > kAuthKeyMax) {
    return FiError(FI_EINVAL, "bad ring size or key");
  }
  absl::StatusOr<Segment> segment = FiError(EEXIST, "no free name");
  for (int attempt = 0; attempt < 8; ++attempt) {
    segment = Segment::Create(
        SegmentName(kConnectionSegmentPrefix, NextConnectionNumber()),
        ConnectionSegmentSize(ring_capacity));
    if (segment.ok() || ToFiErrno(segment.status()) != -EEXIST) break;
  }
  if (!segment.ok()) return segment.status();
  ConnectionArea* area = AreaOf(*segment);
  area->ring_capacity = static_cast<uint32_t>(ring_capacity);
  area->connector_address_len = own.length();
  memcpy(&area->connector_address, own.sockaddr_ptr(), own.length());
  area->key_size = static_cast<uint32_t>(key.size());
  memcpy(area->key, key.data(), key.size());
  absl::StatusOr<ByteRing> out =
      ByteRing::Init(RingMemory(*segment, ring_capacity, 0), ring_capacity);
  absl::StatusOr<ByteRing> in =
      ByteRing::Init(RingMemory(*segment, ring_capacity, 1), ring_capacity);
  if (!out.ok()) return out.status();
  if (!in.ok()) return in.status();
  auto stream = std::make_unique<RingStream>(*std::move(segment), area, *in,
                                             *out, /*out_index=*/0, doorbell,
                                             DoorbellName(peer, scope));
  stream->OfferProbe();
  area->state.store(kOffered, std::memory_order_release);
  return stream;
}

absl::StatusOr<AcceptedConnection> TakeConnection(const std::string& name,
                                                  const std::string& key,
                                                  const Doorbell* doorbell,
                                                  bool cross_memory,
                                                  std::string_view scope) {
  if (!absl::StartsWith(name, kConnectionSegmentPrefix)) {
    return FiError(FI_EINVAL, absl::StrCat("'", name,
                                           "' is not a connection segment"));
  }
  absl::StatusOr<Segment> segment = Segment::Open(name);
  // Both sides have it mapped now (or it is unusable): the name can go.
  shm_unlink(name.c_str());
  if (!segment.ok()) return segment.status();
  if (segment->payload_size() < kRingsOffset) {
    return FiError(FI_EINVAL, absl::StrCat("connection segment ", name,
                                           " is too small"));
  }
  ConnectionArea* area = AreaOf(*segment);
  uint64_t capacity = area->ring_capacity;
  uint32_t address_len = area->connector_address_len;
  uint32_t key_size = area->key_size;
  absl::StatusOr<IpAddress> connector =
      address_len <= sizeof(sockaddr_storage)
          ? IpAddress::FromSockaddr(
                reinterpret_cast<const sockaddr*>(&area->connector_address),
                address_len)
          : FiError(FI_EINVAL, "bad address length");
  absl::Status problem;
  if (!ValidCapacity(capacity) ||
      segment->payload_size() <
          ConnectionSegmentSize(capacity) - kSegmentPayloadOffset) {
    problem = FiError(FI_EINVAL, absl::StrCat("bad ring size ", capacity));
  } else if (!connector.ok()) {
    problem = connector.status();
  } else if (key_size > kAuthKeyMax ||
             std::string(area->key, key_size) != key) {
    problem = FiError(FI_EKEYREJECTED, "another authorization key");
  }
  absl::StatusOr<ByteRing> in = FiError(FI_EINVAL, "unchecked");
  absl::StatusOr<ByteRing> out = in;
  if (problem.ok()) {
    in = ByteRing::Attach(RingMemory(*segment, capacity, 0),
                          ByteRing::BytesNeeded(capacity));
    out = ByteRing::Attach(RingMemory(*segment, capacity, 1),
                           ByteRing::BytesNeeded(capacity));
    if (!in.ok()) problem = in.status();
    if (!out.ok()) problem = out.status();
  }
  if (!problem.ok()) {
    area->state.store(kRefused, std::memory_order_release);
    if (connector.ok()) doorbell->Ring(DoorbellName(*connector, scope));
    return FiError(-ToFiErrno(problem),
                   absl::StrCat("refusing connection ", name, ": ",
                                problem.message()));
  }
  AcceptedConnection accepted;
  accepted.connector = *connector;
  accepted.stream = std::make_unique<RingStream>(
      *std::move(segment), area, *in, *out, /*out_index=*/1, doorbell,
      DoorbellName(*connector, scope));
  accepted.stream->OfferProbe();
  accepted.stream->ProbePeer(cross_memory);
  area->state.store(kAccepted, std::memory_order_release);
  doorbell->Ring(DoorbellName(*connector, scope));
  return accepted;
}

}  // namespace shm
}  // namespace fabric

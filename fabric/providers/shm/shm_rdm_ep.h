// File: fabric/providers/shm/shm_rdm_ep.h
//
// The shm provider's FI_EP_RDM endpoint: reliable, connectionless messages
// between processes of one host and user, over connections made on demand
// in shared memory. Matching, transmits, RMA and atomics are the stream
// engine's (fabric/providers/stream/stream_ep.h), run over ring streams
// (shm_ring_stream.h) instead of sockets.
//
// The endpoint has an address (an IP socket address that only names it,
// see shm_names.h) from fi_endpoint on, and with it its segment, where
// peers post connection requests, and its doorbell. The first transmit to
// an AV address makes a connection segment, posts it to the peer's segment
// and returns 0; transmits queue on the connection until the peer accepts
// (kAccepted) in its progress. A peer whose segment does not exist, or
// whose endpoint is in another network namespace (its doorbell could not
// be rung), fails the call with -FI_ECONNREFUSED; one that refuses (another
// authorization key) or does not answer within kConnectTimeoutMs fails the
// queued transmits with FI_ECONNREFUSED or FI_ETIMEDOUT.
//
// Each direction between two endpoints has its own connection: transmits go
// on the connection the sender made, and answers (acks, read responses)
// come back on it, so messages from one sender keep their order. A
// connection whose peer endpoint is gone without closing it (its process
// died; checked every kLivenessCheckMs) fails
// its outstanding operations with FI_ECONNRESET; one the peer closes ends
// like a closed socket. FI_SOURCE reports the connector's address as the
// AV knows it.
//
// Messages of 16 KiB and more (kPayloadInPlaceMin, link.cc) stay in
// the sender's memory and the receiver copies them once with
// process_vm_readv, when the two processes can (same pid namespace, ptrace
// policy allowing it: probed per connection, the first refusal logged) and
// FI_SHM_CMA is not off; otherwise they stream through the rings.
//
// Progress: every pass reads every connection (a few loads each when
// idle). Before the engine sleeps, PrepareToSleep asks each peer to ring
// the endpoint's doorbell, its progress fd, when it writes. An fi_cq_read
// of the endpoint's own receive CQ (bound to no other endpoint) asks the
// endpoint first (ShmRdmEpEvents::ReadDirect): plain messages that have
// arrived whole go into their receives and the reader's buffer at once,
// and the endpoint's pass runs only for anything else; the domain's whole
// pass (other endpoints) then runs once in kDirectProgressInterval empty
// reads.
#ifndef FABRIC_PROVIDERS_SHM_SHM_RDM_EP_H_
#define FABRIC_PROVIDERS_SHM_SHM_RDM_EP_H_

#include <rdma/fabric.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/api/core/address.h"
#include "fabric/providers/shm/shm_doorbell.h"
#include "fabric/providers/shm/shm_requests.h"
#include "fabric/providers/shm/shm_ring_stream.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/cq.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/progress.h"

namespace fabric {
namespace shm {

inline constexpr int kConnectTimeoutMs = 5000;
inline constexpr int kLivenessCheckMs = 200;
inline constexpr uint32_t kPassesPerClockRead = 1024;

class ShmRdmEp;

// The endpoint's progress, what the data path asks of it, and the direct
// reads of its receive CQ (util/cq.h CqDirectProducer): an fi_cq_read
// there takes the plain messages that have arrived whole on its links
// straight into posted receives and its buffer, and runs the endpoint's
// pass only when something else waits (the domain's whole pass: one read
// in kDirectProgressInterval of those that find nothing).
class ShmRdmEpEvents : public stream::StreamEpOwner,
                       public ProgressSource,
                       public CqDirectProducer {
 public:
  explicit ShmRdmEpEvents(ShmRdmEp* ep) : ep_(ep) {}
  stream::Link* LinkFor(fi_addr_t dest, int* error) override;
  void LinkClosed(stream::Link* link, int error) override;
  void LinkBacklog(stream::Link* link, bool backlogged) override;
  void ReceivePosted() override;
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  bool poll_directly() const override { return true; }
  bool always_run() const override { return true; }
  bool PrepareToSleep() override;
  size_t ReadDirect(UtilCq* cq, void* buf, size_t count,
                    fi_addr_t* sources) override;

 private:
  ShmRdmEp* ep_;
};

// What the endpoint knows of one link besides the data path's state.
struct ShmLinkState {
  RingStream* stream = nullptr;  // owned by the link's connection
  // The peer endpoint's segment: while its creator holds it, the peer
  // lives (IsSegmentInUse).
  std::string peer_segment;
  bool backlogged = false;
  // Outgoing links until the peer accepts: the connection is held.
  bool awaiting_accept = false;
  std::chrono::steady_clock::time_point deadline;
};

// Every link of an shm endpoint is one of these.
class ShmLink : public stream::Link {
 public:
  ShmLink(stream::StreamEp* ep, std::unique_ptr<RingStream> stream,
          fi_addr_t peer, ShmLinkState state)
      : stream::Link(ep, std::move(stream), peer), shm(std::move(state)) {}
  ShmLinkState shm;
};

inline ShmLink* AsShmLink(stream::Link* link) {
  return static_cast<ShmLink*>(link);
}

class ShmRdmEp {
 public:
  // First: the application's fid_ep* is &base.util.ep_fid.
  stream::StreamEp base;

  ShmRdmEp() : events(this) { base.owner = &events; }

  ShmRdmEpEvents events;
  IpAddress address;  // the endpoint's name
  std::string scope;  // and its scope (shm_names.h)
  size_t ring_capacity = 0;  // of the connections it makes
  bool cross_memory = true;  // FI_SHM_CMA: try process_vm_readv
  std::optional<RequestTable> requests;
  std::optional<Doorbell> doorbell;
  bool registered = false;  // with the domain's progress engine
  bool armed = false;       // PrepareToSleep asked peers for the doorbell
  stream::RdmLinks links;   // ShmLinks
  // Progress passes since the last liveness check; the clock is read only
  // every kPassesPerClockRead passes, which a polling loop feels.
  uint32_t passes = 0;
  std::chrono::steady_clock::time_point next_liveness_check;
  // The link the next direct read of the receive CQ looks at first.
  size_t direct_start = 0;

  const fi_provider* log() const { return base.log(); }
  ProgressEngine* engine() const { return base.util.domain->progress.get(); }
};
FABRIC_BEGINS_WITH(ShmRdmEp, base);

// The provider's settings an endpoint takes.
struct ShmEpOptions {
  size_t ring_capacity;  // of the connections it makes (FI_SHM_RING_SIZE)
  bool cross_memory;     // FI_SHM_CMA
};

// Provider::OpenEndpoint of shm.
int OpenShmRdmEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                 void* context, const ShmEpOptions& options);

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_RDM_EP_H_

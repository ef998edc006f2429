// File: fabric/providers/rxm/rxm_ep.h
//
// FI_EP_RDM over a provider's FI_EP_MSG endpoints (what libfabric's rxm
// does): the stream engine (stream_ep.h: matching, tagged messages,
// FI_DIRECTED_RECV, FI_SOURCE, RMA and atomics carried as messages and
// applied at the target) runs over MsgStreams (msg_stream.h), one
// connection per peer, made on demand through the provider's own
// connection management. The verbs provider serves FI_EP_RDM with it, over
// RC queue pairs.
//
// The endpoint listens on a passive endpoint of the provider bound to
// info->src_addr (port 0: the provider picks one) from fi_endpoint on;
// fi_getname is that address, and AV entries are other endpoints' such
// addresses (IPv4 or IPv6). The first transmit to an AV address opens an
// MSG endpoint on the same domain, connects it with the endpoint's own
// name as connection data, and returns 0; transmits to that peer queue on
// it until FI_CONNECTED, and a connect that fails fails them with its
// error (the next transmit connects again). An incoming request is
// accepted; its connection data names the peer, whose fi_addr_t FI_SOURCE
// reports (FI_ADDR_NOTAVAIL while the AV does not hold it). Each side
// transmits on the first connection it has with a peer, its own or the
// peer's, so messages from one sender keep their order; both connections
// of a simultaneous connect stay up. A connection that breaks fails its
// outstanding operations (FI_ECONNRESET) and the next transmit connects
// again.
//
// Internal objects, opened through the public API: a domain of their own
// on the endpoint's fabric (opened with the MSG info, with manual progress
// and FI_THREAD_SAFE; its buffers registered when its mr_mode has
// FI_MR_LOCAL), with one CQ (FI_CQ_FORMAT_MSG, kCqSize entries:
// kRxBuffers + kTxBuffers per connection, so about 2000 connections) for
// every stream's buffers and an MSG endpoint per connection; an EQ and the
// passive endpoint on the fabric. Two sources in the endpoint's domain
// engine progress them: the data (every pass: the MSG endpoints'
// completions, straight from their providers where they offer that
// (util/cq.h CqReadDirectFrom); the internal domain's engine and the CQ
// when that found none while a link's provider offers no such read or
// links connect, and every kEnginePassInterval passes; then the links)
// and the connections (the fabric's engine while links connect, after a
// sleep, or every kCmPassInterval passes, then the EQ; EQ reads on the
// fabric run that engine too). Their fds are those engines' own,
// armed before the endpoint's engine sleeps. Closing an MSG endpoint takes
// its sources out of the internal domain's and the fabric's engines, never
// the one a pass of the endpoint runs in, so the links' endpoints close
// inside those passes.
//
// Closing the endpoint first waits (up to kCloseDrainMs) for its
// connections' sends to complete: a provider may drop what is still in
// flight when its endpoint closes (an RC queue pair does), and the data
// path reported those sends complete when their bytes were copied.
#ifndef FABRIC_PROVIDERS_RXM_RXM_EP_H_
#define FABRIC_PROVIDERS_RXM_RXM_EP_H_

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fabric/api/core/address.h"
#include "fabric/api/core/info.h"
#include "fabric/providers/rxm/msg_stream.h"
#include "fabric/providers/stream/srx.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/progress.h"

namespace fabric {
namespace rxm {

inline constexpr size_t kCqSize = 1 << 16;
// Passes between runs of the fabric's engine while no connection is being
// set up (a run asks poll(2) about the connection fds: a system call that
// a polling loop would pay on every pass).
inline constexpr uint32_t kCmPassInterval = 256;
// Passes without the internal domain's engine (which reads the MSG
// endpoints' completions where their providers give none straight) while
// every link's provider gives them straight: passes that found some, and
// empty ones (those providers read their connections' events while
// idle).
inline constexpr uint32_t kEnginePassInterval = 256;
inline constexpr int kCloseDrainMs = 1000;

class RxmEp;

// The data: the MSG endpoints' completions (straight from their providers,
// else through the internal domain's engine and the internal CQ), and the
// links. Its fd is that engine's.
class RxmEpEvents : public stream::StreamEpOwner, public ProgressSource {
 public:
  explicit RxmEpEvents(RxmEp* ep) : ep_(ep) {}
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

 private:
  RxmEp* ep_;
};

// The connections: the fabric's engine (the passive and MSG endpoints'
// connection setup) and the internal EQ. Its fd is that engine's.
class RxmCmEvents : public ProgressSource {
 public:
  explicit RxmCmEvents(RxmEp* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  bool poll_directly() const override { return true; }
  bool always_run() const override { return true; }
  bool PrepareToSleep() override;

 private:
  RxmEp* ep_;
};

// A link over one MSG endpoint; its stream is owned by its connection.
class RxmLink : public stream::Link {
 public:
  RxmLink(stream::StreamEp* ep, std::unique_ptr<MsgStream> stream,
          fi_addr_t peer)
      : stream::Link(ep, std::move(stream), peer) {}
  MsgStream* stream = nullptr;
  bool connecting = true;  // until FI_CONNECTED: its connection is held
};

class RxmEp {
 public:
  // First: the application's fid_ep* is &base.util.ep_fid.
  stream::StreamEp base;

  RxmEp() : events(this), cm_events(this) { base.owner = &events; }

  RxmEpEvents events;
  RxmCmEvents cm_events;
  // The provider's FI_EP_MSG info the internal endpoints are opened with:
  // accepted ones and the passive endpoint with it as it is, connecting
  // ones with connect_info (its source port 0: the passive endpoint has
  // the port).
  InfoPtr msg_info;
  InfoPtr connect_info;
  fid_domain* msg_domain = nullptr;
  fid_eq* eq = nullptr;
  fid_cq* cq = nullptr;
  fid_pep* pep = nullptr;
  IpAddress address;            // the passive endpoint's: the name
  std::vector<char> name;       // in the endpoint's address format
  bool register_buffers = false;  // the MSG domain asks FI_MR_LOCAL
  // The MSG endpoints do RMA reads both ways: large messages go by
  // rendezvous (msg_stream.h), with virtual remote addresses or offsets.
  bool rma_reads = false;
  bool virt_addr = false;
  bool registered = false;        // with the domain's progress engine
  // When the next pass runs the fabric's engine: at once while links
  // connect or after a sleep (a connection request may have woken it),
  // else every kCmPassInterval passes.
  std::atomic<int> connecting{0};
  std::atomic<bool> cm_due{true};
  uint32_t cm_passes = 0;  // touched by one pass at a time
  // Passes since the internal domain's engine last ran
  // (RxmEpEvents::Progress, kEnginePassInterval); under the endpoint's
  // lock.
  uint32_t passes_without_engine = 0;
  stream::RdmLinks links;
  std::unordered_map<fid_ep*, RxmLink*> by_ep;  // for EQ events
  RetiredBuffers retired;

  const fi_provider* log() const { return base.log(); }
  ProgressEngine* engine() const { return base.util.domain->progress.get(); }
  ProgressEngine* cm_engine() const {
    return base.util.domain->fabric->progress.get();
  }
  ProgressEngine* msg_engine() const {
    return FidCast<UtilDomain>(msg_domain)->progress.get();
  }
};
FABRIC_BEGINS_WITH(RxmEp, base);

// Opens an RDM endpoint over MSG endpoints opened with `msg_info` (the
// provider's FI_EP_MSG info for the same domain; its src_addr is where
// the endpoint listens) on `domain`, for the application's `info`.
// Messages of 16 KiB or more (link.cc, kPayloadInPlaceMin) go by
// rendezvous when `msg_info` offers RMA reads both ways (msg_stream.h).
int OpenRxmEp(fid_domain* domain, fi_info* info, const fi_info& msg_info,
              fid_ep** ep, void* context);

}  // namespace rxm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_RXM_RXM_EP_H_

// File: fabric/providers/tcp/tcp_rdm_ep.h
//
// The tcp provider's FI_EP_RDM endpoint: reliable, connectionless messages
// over TCP connections made on demand. The endpoint listens on its address
// (fi_getname) from fi_enable on.
//
// The first transmit to an AV address starts a non-blocking connect and
// returns 0; the connection finishes in progress (inside CQ reads with
// FI_PROGRESS_MANUAL, on the engine's thread with FI_PROGRESS_AUTO). Once
// connected, the endpoint sends a hello (kConnRequest carrying its own
// listening address and authorization key) and waits for the answer:
// kAccept, or kReject for a malformed hello or another key. Transmits to
// that peer posted meanwhile queue on the connection unwritten; on kAccept
// they go in order. When the connect or the handshake fails, they complete
// with FI_ECONNREFUSED error entries and the next transmit connects again
// (a connect the kernel refuses at once fails the call itself with
// -FI_ECONNREFUSED). A TCP connect not finished within kConnectTimeoutMs (a
// peer host that drops the SYN) fails its transmits with FI_ETIMEDOUT,
// checked by the endpoint's progress. The hello's answer has no limit: a
// peer under manual progress answers when its application next polls, and
// a peer that dies closes the connection.
//
// A connection accepted from a peer is also used for transmits to it, so
// two endpoints that talk share one connection. When both connect at the
// same moment, each receives the other's hello while its own connection
// still waits for an answer; the connection made by the endpoint with the
// smaller listening address (byte-wise sockaddr) survives. The endpoint
// with the larger address accepts the peer's connection, moves its queued
// transmits onto it in order, and closes its own. The one with the smaller
// address leaves the peer's hello unanswered until its own connection is
// answered, then closes it; should its own connection fail instead, it
// accepts the peer's and moves its transmits there. No transmit fails and
// no message is reordered for the collision.
//
// Peers on the same host are reached through shm instead, by default
// (tcp_local_path.h).
//
// Messages to one peer keep their order (one connection). FI_SOURCE reports
// the sender's fi_addr_t from the hello's address (FI_ADDR_NOTAVAIL when
// the AV does not hold it; such a peer's connections are not matched
// against the endpoint's own). Once fi_av_insert adds the address, its
// messages report the new fi_addr_t, those already waiting for a receive
// too, and a receive directed at it takes them (ResolveQueuedSenders):
// Open MPI inserts peers lazily, after their first messages may have
// arrived. FI_DIRECTED_RECV receives match only their source. A connection that breaks fails its own outstanding operations
// (FI_ECONNRESET) and the next transmit to that peer connects again.
//
// Each peer costs one socket (one fd) and a 64 KiB staging buffer, of which
// only the pages messages touch are resident. The first tcp endpoint raises the soft RLIMIT_NOFILE to
// the hard limit; past it a connect fails with -FI_EMFILE and an incoming
// connection is refused (tcp_fd_limit.h).
#ifndef FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_
#define FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_

#include <poll.h>
#include <rdma/fabric.h>

#include <atomic>
#include <chrono>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fabric/api/core/address.h"
#include "fabric/providers/provider.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "fabric/providers/tcp/tcp_local_path.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/progress.h"

namespace fabric {
namespace tcp {

class TcpRdmEp;

class TcpRdmEpEvents : public stream::StreamEpOwner, public ProgressSource {
 public:
  explicit TcpRdmEpEvents(TcpRdmEp* ep) : ep_(ep) {}
  stream::Link* LinkFor(fi_addr_t dest, int* error) override;
  void LinkClosed(stream::Link* link, int error) override;
  void LinkBacklog(stream::Link* link, bool backlogged) override;
  void ReceivePosted() override;
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  // Each pass asks poll(2) or epoll about the endpoint's own sockets.
  bool poll_directly() const override { return true; }
  // The sockets go into the epoll set behind progress_fd() (with few, it
  // holds them only from here until passes show nobody blocks).
  void ArmFds() override;

 private:
  TcpRdmEp* ep_;
};

// An accepted socket whose hello is still arriving.
struct RdmIncoming {
  int fd;
  CmReader reader;
};

// An outgoing connection before the peer's answer. Its link's connection
// is held: transmits queue on it unwritten.
constexpr int kConnectTimeoutMs = 5000;

struct RdmHandshake {
  // When the connect fails unless finished (kConnectTimeoutMs after it
  // started).
  std::chrono::steady_clock::time_point deadline;
  bool hello_sent = false;  // the connect finished and the hello went out
  CmReader answer;
  // The same peer's hello, left unanswered because this connection wins
  // the tie-break; -1 when none.
  int rival_fd = -1;
  IpAddress rival_address;
};

class TcpRdmEp {
 public:
  // First: the application's fid_ep* is &base.util.ep_fid.
  stream::StreamEp base;

  TcpRdmEp() : events(this) { base.owner = &events; }

  TcpRdmEpEvents events;
  int listen_fd = -1;
  int epoll_fd = -1;  // the listening socket, handshakes and links
  // The same sockets and events, for poll(2) while they are few.
  std::vector<pollfd> watched;
  IpAddress listen_address;  // from fi_enable on: what hellos carry
  bool registered = false;  // with the domain's progress engine
  // Whether it has connections (links or accepted sockets): without, most
  // progress passes skip it. Set when one is made, recomputed by passes.
  std::atomic<bool> has_sockets{false};
  // Whether the watched sockets are in epoll_fd (always with more than a
  // pass polls), and the passes since something last may have blocked.
  bool epoll_armed = false;
  uint32_t busy_passes = 0;
  uint32_t idle_passes = 0;  // progress passes without a connection
  uint32_t listen_passes = 0;  // passes that read connections directly
  // The provider of the local path (shm), null when FI_TCP_SHM is 0; the
  // path itself from fi_enable on, when it could be opened.
  const Provider* local_provider = nullptr;
  std::unique_ptr<TcpLocalPath> local_path;
  std::list<RdmIncoming> incoming;
  stream::RdmLinks links;
  std::unordered_map<int, stream::Link*> link_by_fd;
  // Outgoing links awaiting their answer.
  std::unordered_map<stream::Link*, RdmHandshake> handshakes;

  const fi_provider* log() const { return base.log(); }
  ProgressEngine* engine() const { return base.util.domain->progress.get(); }
};
FABRIC_BEGINS_WITH(TcpRdmEp, base);

// Provider::OpenEndpoint of tcp for FI_EP_RDM; `local_provider` (shm, or
// null) reaches the peers on this host.
int OpenTcpRdmEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                 void* context, const Provider* local_provider);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_

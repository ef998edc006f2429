// File: fabric/providers/tcp/tcp_rdm_ep.h
//
// The tcp provider's FI_EP_RDM endpoint: reliable, connectionless messages
// over TCP connections made on demand. The endpoint listens on its address
// (fi_getname) from fi_enable on. The first transmit to an AV address
// connects to it and sends a hello carrying the endpoint's own address and
// authorization key; what the peer sends back comes on the same connection.
// A connection accepted from a peer is also used for transmits to it, so
// two endpoints that talk need one connection; when both connect at the
// same moment, each keeps receiving on both and sends on its own.
// Messages to one peer keep their order (one connection). FI_SOURCE reports
// the sender's fi_addr_t from the hello's address (FI_ADDR_NOTAVAIL when
// the AV does not hold it). FI_DIRECTED_RECV receives match only their
// source. A connection that breaks fails its own outstanding operations
// (FI_ECONNRESET) and the next transmit to that peer connects again.
//
// A transmit that must connect first waits for the connection inside the
// call (at most kConnectTimeoutMs; -FI_ECONNREFUSED when nothing listens).
// Each peer costs one socket (one fd) and, while messages arrive, a 64 KiB
// staging buffer. The first tcp endpoint raises the soft RLIMIT_NOFILE to
// the hard limit; past it a connect fails with -FI_EMFILE and an incoming
// connection is refused (tcp_fd_limit.h).
#ifndef FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_
#define FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_

#include <rdma/fabric.h>

#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "fabric/api/core/address.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "fabric/providers/tcp/tcp_ep.h"
#include "fabric/providers/util/progress.h"

namespace fabric {
namespace tcp {

constexpr int kConnectTimeoutMs = 5000;

class TcpRdmEp;

class TcpRdmEpEvents : public TcpEpOwner, public ProgressSource {
 public:
  explicit TcpRdmEpEvents(TcpRdmEp* ep) : ep_(ep) {}
  TcpLink* LinkFor(fi_addr_t dest, int* error) override;
  void LinkClosed(TcpLink* link, int error) override;
  void LinkBacklog(TcpLink* link, bool backlogged) override;
  void ReceivePosted() override;
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

 private:
  TcpRdmEp* ep_;
};

// An accepted socket whose hello is still arriving.
struct RdmIncoming {
  int fd;
  CmReader reader;
};

class TcpRdmEp {
 public:
  TcpEp base;  // first: the application's fid_ep* is &base.util.ep_fid

  TcpRdmEp() : events(this) { base.owner = &events; }

  TcpRdmEpEvents events;
  int listen_fd = -1;
  int epoll_fd = -1;  // the listening socket, handshakes and links
  bool registered = false;  // with the domain's progress engine
  std::list<RdmIncoming> incoming;
  std::vector<std::unique_ptr<TcpLink>> links;
  std::unordered_map<int, TcpLink*> link_by_fd;
  std::unordered_map<fi_addr_t, TcpLink*> link_to;  // for transmits
  std::vector<std::unique_ptr<TcpLink>> closed;     // freed at next progress

  const fi_provider* log() const { return base.log(); }
  ProgressEngine* engine() const { return base.util.domain->progress.get(); }
};

// Provider::OpenEndpoint of tcp for FI_EP_RDM.
int OpenTcpRdmEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                 void* context);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_RDM_EP_H_

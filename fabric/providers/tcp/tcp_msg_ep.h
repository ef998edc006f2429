// File: fabric/providers/tcp/tcp_msg_ep.h
//
// The tcp provider's FI_EP_MSG endpoint: one TCP connection set up through
// the handshake of tcp_cm.h (fi_connect, or fi_endpoint on an FI_CONNREQ
// and fi_accept), then one link of the shared data path (stream_ep.h):
// messages (with FI_MULTI_RECV), tagged messages, RMA checked at the
// target, remote CQ data, FI_DELIVERY_COMPLETE, FI_FENCE, fi_cancel; and
// fi_shutdown / FI_SHUTDOWN.
#ifndef FABRIC_PROVIDERS_TCP_TCP_MSG_EP_H_
#define FABRIC_PROVIDERS_TCP_TCP_MSG_EP_H_

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "fabric/providers/util/endpoint.h"
#include "fabric/providers/util/fid_cast.h"
#include "fabric/providers/util/progress.h"

namespace fabric {
namespace tcp {

// An FI_CONNREQ's handle: the accepted socket, until fi_endpoint takes it
// (and fi_accept answers) or fi_reject refuses it.
struct TcpConnReq {
  fid conn_fid;  // first: info->handle is this (FI_CLASS_CONNREQ)
  int fd;
  fid_pep* pep;
};
FABRIC_BEGINS_WITH(TcpConnReq, conn_fid);

class TcpMsgEp;

// The connection handshake of fi_connect, advanced by the fabric's progress
// engine (EQ reads) until the data phase starts.
class TcpMsgEpSetup : public ProgressSource {
 public:
  explicit TcpMsgEpSetup(TcpMsgEp* ep) : ep_(ep) {}
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

 private:
  TcpMsgEp* ep_;
};

// The endpoint's link once connected: advanced by its domain's progress
// engine (CQ and counter reads); what the shared data path asks of an MSG
// endpoint.
class TcpMsgEpEvents : public stream::StreamEpOwner, public ProgressSource {
 public:
  explicit TcpMsgEpEvents(TcpMsgEp* ep) : ep_(ep) {}
  stream::Link* LinkFor(fi_addr_t dest, int* error) override;
  void LinkClosed(stream::Link* link, int error) override;
  void LinkBacklog(stream::Link* link, bool backlogged) override;
  void ReceivePosted() override;
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;
  // A read that finds nothing costs what asking poll(2) would; one that
  // finds bytes saves the poll.
  bool poll_directly() const override { return true; }

 private:
  TcpMsgEp* ep_;
};

enum class MsgEpState {
  kIdle,        // no connection yet
  kConnecting,  // fi_connect: TCP connect in flight
  kAwaitingResponse,  // fi_connect: request sent, waiting for accept/reject
  kAccepting,   // opened on an FI_CONNREQ, before fi_accept
  kConnected,
  kShutdown,  // fi_shutdown, the peer's shutdown, or an error
};

class TcpMsgEp {
 public:
  // First: the application's fid_ep* is &base.util.ep_fid.
  stream::StreamEp base;

  TcpMsgEp() : setup(this), events(this) { base.owner = &events; }

  TcpMsgEpSetup setup;
  TcpMsgEpEvents events;
  // Written by the handshake (perhaps on another thread's EQ read) and read
  // by the data calls; the link exists before kConnected is stored.
  std::atomic<MsgEpState> state{MsgEpState::kIdle};
  int fd = -1;  // the socket, once there is one (the link owns it once
                // established)
  // With the fabric's progress engine, and with the domain's.
  bool setup_registered ABSL_GUARDED_BY(base.util.mutex) = false;
  bool events_registered ABSL_GUARDED_BY(base.util.mutex) = false;
  // fi_setname, or info->src_addr.
  std::optional<IpAddress> bind_address ABSL_GUARDED_BY(base.util.mutex);
  // fi_connect's, for the request.
  std::vector<char> connect_data ABSL_GUARDED_BY(base.util.mutex);
  CmReader cm_reader ABSL_GUARDED_BY(base.util.mutex);
  std::unique_ptr<stream::Link> link ABSL_GUARDED_BY(base.util.mutex);
  bool local_shutdown ABSL_GUARDED_BY(base.util.mutex) = false;

  const fi_provider* log() const { return base.log(); }
  ProgressEngine* engine() const {
    return base.util.domain->progress.get();
  }
  ProgressEngine* setup_engine() const {
    return base.util.domain->fabric->progress.get();
  }
};
FABRIC_BEGINS_WITH(TcpMsgEp, base);

inline TcpMsgEp* ToTcpMsgEp(fid_ep* ep) { return FidCast<TcpMsgEp>(ep); }

// Provider::OpenEndpoint / OpenPassiveEndpoint of tcp for FI_EP_MSG.
int OpenTcpMsgEp(fid_domain* domain, fi_info* info, fid_ep** ep,
                 void* context);
int OpenTcpPassiveEp(fid_fabric* fabric, fi_info* info, fid_pep** pep,
                     void* context);

// The connection request behind an FI_CONNREQ handle, or null.
TcpConnReq* AsTcpConnReq(fid* handle);
void FreeTcpConnReq(TcpConnReq* request);  // closes its fd unless taken (-1)
// fi_endpoint on a request: its socket, or -1 when the handle is not a
// pending request; the request is gone afterwards.
int TakeTcpConnReq(fid* handle);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_MSG_EP_H_

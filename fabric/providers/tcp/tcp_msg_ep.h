// File: fabric/providers/tcp/tcp_msg_ep.h
//
// The tcp provider's FI_EP_MSG endpoint: one TCP connection set up through
// the handshake of tcp_cm.h (fi_connect, or fi_endpoint on an FI_CONNREQ
// and fi_accept), then the data path of tcp_connection.h: messages (with
// FI_MULTI_RECV), tagged messages (unexpected ones are buffered), RMA
// read/write checked at the target with MrResolveRemote, remote CQ data,
// FI_DELIVERY_COMPLETE, FI_FENCE, fi_cancel, and fi_shutdown / FI_SHUTDOWN.
//
// Receive-side resource management: a message that finds no posted
// receive stays in the socket (the sender's data waits in TCP's buffers)
// until one is posted: "retried" in the words of fi_domain(3).
// Untagged messages are never buffered; unexpected tagged ones are, up to
// kMaxUnexpectedBytes, and then wait in the socket too.
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

#include "fabric/api/core/address.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "fabric/providers/tcp/tcp_connection.h"
#include "fabric/providers/util/endpoint.h"
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

// A posted receive.
struct PostedRecv {
  void* context = nullptr;
  uint64_t flags = 0;  // the operation's flags
  std::vector<iovec> iov;
  size_t capacity = 0;
  fi_hmem_iface iface = FI_HMEM_SYSTEM;
  uint64_t device = 0;
  bool tagged = false;
  uint64_t tag = 0;
  uint64_t ignore = 0;
  bool write_entry = false;
  bool reserved = false;
  size_t used = 0;  // FI_MULTI_RECV: bytes already filled
};

// A tagged message that arrived before its receive.
struct UnexpectedMsg {
  Header header = {};
  std::vector<char> data;
};

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

// The endpoint's callbacks from its connection and from its domain's
// progress engine (CQ and counter reads) once connected.
class TcpMsgEpEvents : public ConnectionHandler, public ProgressSource {
 public:
  explicit TcpMsgEpEvents(TcpMsgEp* ep) : ep_(ep) {}
  RxTarget OnHeader(const Header& header,
                    const RmaDescriptor* descriptors) override;
  void OnMessageDone(const Header& header, size_t placed) override;
  void OnSent(std::unique_ptr<TxEntry> entry) override;
  void OnClosed(int error) override;
  void OnBacklog(bool backlogged) override;
  void Progress() override;
  int progress_fd() const override;
  bool auto_progress() const override;

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
  UtilEndpoint util;  // first: the application's fid_ep* is &util.ep_fid

  TcpMsgEp() : setup(this), events(this) {}

  TcpMsgEpSetup setup;
  TcpMsgEpEvents events;
  // Written by the handshake (perhaps on another thread's EQ read) and read
  // by the data calls; the connection exists before kConnected is stored.
  std::atomic<MsgEpState> state{MsgEpState::kIdle};
  int fd = -1;  // the socket, once there is one (the connection owns it
                // once established)
  bool setup_registered = false;   // with the fabric's progress engine
  bool events_registered = false;  // with the domain's
  std::optional<IpAddress> bind_address;  // fi_setname, or info->src_addr
  std::vector<char> connect_data;         // fi_connect's, for the request
  CmReader cm_reader;
  std::unique_ptr<Connection> connection;
  bool local_shutdown = false;

  // Receives, in posting order.
  std::deque<std::unique_ptr<PostedRecv>> recvs;
  std::list<std::unique_ptr<PostedRecv>> tagged_recvs;
  std::list<UnexpectedMsg> unexpected;
  size_t unexpected_bytes = 0;
  // The receive or message the payload now arriving goes to.
  std::unique_ptr<PostedRecv> current_recv;
  std::optional<UnexpectedMsg> current_unexpected;
  std::unique_ptr<TxEntry> current_read;  // a read's answer arriving
  std::vector<iovec> rma_target;          // a remote write's memory
  iovec rx_window = {};                   // FI_MULTI_RECV: the unused part
  int rma_status = 0;
  bool refused = false;  // the arriving message found no receive (no RM)

  // Transmit side.
  size_t tx_outstanding = 0;  // posted, not yet completed
  uint64_t next_id = 1;
  size_t answers_pending = 0;  // sent or queued entries awaiting an answer
  std::unordered_map<uint64_t, std::unique_ptr<TxEntry>> awaiting;
  std::deque<std::unique_ptr<TxEntry>> fenced;  // held back by FI_FENCE

  const fi_provider* log() const {
    return util.domain->fabric->provider->c_provider();
  }
  ProgressEngine* engine() const { return util.domain->progress.get(); }
  ProgressEngine* setup_engine() const {
    return util.domain->fabric->progress.get();
  }
};

inline TcpMsgEp* ToTcpMsgEp(fid_ep* ep) {
  return reinterpret_cast<TcpMsgEp*>(ep);
}

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

// Data path entry points (tcp_msg_ops.cc).
extern fi_ops_msg kTcpMsgOps;
extern fi_ops_tagged kTcpTaggedOps;
extern fi_ops_rma kTcpRmaOps;

// Posts a message the endpoint built; takes care of limits, CQ
// reservation, FI_FENCE. 0 or -fi_errno (nothing posted).
ssize_t PostTx(TcpMsgEp* ep, std::unique_ptr<TxEntry> entry);
// Takes a tagged receive: completes it from a buffered unexpected message
// when one matches, else queues it.
void PostTaggedRecv(TcpMsgEp* ep, std::unique_ptr<PostedRecv> recv);
// Reports a finished transmit operation.
void CompleteTx(TcpMsgEp* ep, std::unique_ptr<TxEntry> entry, int error);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_MSG_EP_H_

// File: fabric/providers/tcp/tcp_local_path.h
//
// How a tcp RDM endpoint reaches peers on its own host: through an shm
// endpoint it opens and owns, as fi_peer(3)'s example describes. At
// fi_enable (unless FI_TCP_SHM is 0) the endpoint opens, with the shm
// provider's own calls:
//  - an shm fabric and a peer domain of its domain (fi_domain2, FI_PEER):
//    shm's endpoints progress with tcp's (one progress engine: tcp's CQ
//    reads and waits advance them), and take tcp's memory regions as local
//    descriptors and remote keys;
//  - a peer CQ over each of its CQs (fi_cq_open, FI_PEER): shm writes its
//    completions into tcp's, so the application reads one CQ;
//  - a peer SRX over its own receive queues (fi_srx_context, FI_PEER): shm
//    takes its receive buffers from the receives posted on tcp, so matching,
//    FI_DIRECTED_RECV and FI_MULTI_RECV stay one queue in posting order;
//  - an shm endpoint named by the tcp endpoint's address in the "tcp" scope
//    (shm_names.h), bound to tcp's AV (both name peers by the same
//    addresses, so shm reports FI_SOURCE as tcp's fi_addr_t) and to tcp's
//    counters (shm's operations count there too).
// A transmit (msg, tagged, RMA, atomic) to an AV address whose IP belongs to
// this host (an address of one of its interfaces, loopback included, or the
// wildcard) goes through shm; one to any other goes over TCP. The shm
// endpoint reached is the one TCP would reach: shm names it by the exact
// address the peer listens on, in this network namespace (shm_names.h),
// and only the tcp endpoint bound to that address here (a bind is
// exclusive) makes it; containers that share /dev/shm and a hostname but
// not a network never reach each other's. A peer that
// has no shm endpoint in the scope (it runs with FI_TCP_SHM=0, as another
// user, or in another network namespace) makes shm refuse the first
// transmit at once (-FI_ECONNREFUSED, nothing sent): that peer then goes
// over TCP for the rest of the endpoint's life. So does a peer whose
// connection finds no room in /dev/shm (-FI_ENOSPC). Each peer keeps one path,
// so its messages keep their order.
//
// Which addresses are this host's is read once, when the path opens; an
// address added later is reached over TCP. The path costs the shm objects
// and 64 KiB for the per-address decisions.
//
// The shm endpoint takes its receives from tcp's queues, or from the
// application's shared receive context tcp is bound to, and transmits
// through tcp's shared transmit context when it has one. Not used, and
// logged at info level, when the endpoint takes its receives from another
// provider's SRX, or when the shm objects cannot be opened (a
// small /dev/shm, say).
#ifndef FABRIC_PROVIDERS_TCP_TCP_LOCAL_PATH_H_
#define FABRIC_PROVIDERS_TCP_TCP_LOCAL_PATH_H_

#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_ext.h>

#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "fabric/api/core/address.h"
#include "fabric/providers/provider.h"
#include "fabric/providers/stream/stream_ep.h"
#include "fabric/providers/util/mutex.h"

namespace fabric {
namespace tcp {

class TcpLocalPath : public stream::TransmitDivert {
 public:
  // The path of the enabled endpoint `ep` listening at `address`, through
  // `shm`; null when it does not apply or cannot be opened (logged).
  static std::unique_ptr<TcpLocalPath> Open(const Provider& shm,
                                            stream::StreamEp* ep,
                                            const IpAddress& address);
  // Closes the shm objects, peers before what they import.
  ~TcpLocalPath() override;
  TcpLocalPath(const TcpLocalPath&) = delete;
  TcpLocalPath& operator=(const TcpLocalPath&) = delete;

  // The shm endpoint a transmit to `dest` goes through, or null: TCP.
  fid_ep* Via(fi_addr_t dest) override;
  // shm refused `dest` (no endpoint there): it goes over TCP from now on.
  void Refused(fi_addr_t dest) override;

  // The shm endpoint (fi_control's FI_SETOPSFLAG is passed on to it).
  fid_ep* shm_endpoint() const { return ep_; }

 private:
  TcpLocalPath() = default;
  absl::Status OpenObjects(const Provider& shm, stream::StreamEp* tcp,
                           const IpAddress& address);
  absl::Status OpenCqs(const UtilEndpoint& tcp);
  absl::Status BindEndpoint(const UtilEndpoint& tcp);
  // Whether `peer` is an address of this host.
  bool IsLocal(const IpAddress& peer) const;

  UtilAv* av_ = nullptr;  // tcp's, which shm's endpoint is bound to
  std::vector<IpAddress> host_addresses_;
  fi_peer_domain_context domain_context_ = {};
  fi_peer_cq_context tx_cq_context_ = {};
  fi_peer_cq_context rx_cq_context_ = {};
  fi_peer_srx_context srx_context_ = {};
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* tx_cq_ = nullptr;
  fid_cq* rx_cq_ = nullptr;  // tx_cq_ when tcp's two directions share one
  fid_ep* srx_ = nullptr;
  fid_ep* ep_ = nullptr;

  // Per AV address asked about, which path it takes: read without a lock
  // below kFastAddresses (AV indices are consecutive from 0), in a map
  // under mutex_ above.
  enum Path : uint8_t { kUndecided = 0, kShm, kTcp };
  static constexpr size_t kFastAddresses = 65536;
  std::vector<std::atomic<uint8_t>> paths_;
  Mutex mutex_;  // held while deciding
  std::unordered_map<fi_addr_t, Path> paths_beyond_ ABSL_GUARDED_BY(mutex_);
  // Records `path` for `dest`.
  void Decide(fi_addr_t dest, Path path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
};

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_LOCAL_PATH_H_

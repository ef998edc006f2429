// Fabric setup for each endpoint type, step by step as a newcomer would
// write it: fi_getinfo, fi_fabric, fi_domain, completion queues, an address
// vector (RDM, DGRAM) or an event queue and a connection (MSG), the
// endpoint, then the names traded through the out-of-band channel.
#ifndef APPS_PINGPONG_FABRIC_SETUP_H_
#define APPS_PINGPONG_FABRIC_SETUP_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <vector>

#include "apps/pingpong/options.h"
#include "apps/pingpong/out_of_band.h"

namespace pingpong {

// The API version pingpong asks fi_getinfo for. 1.17, not this library's
// 1.18: the program uses nothing newer, and so the same binary also runs on
// Debian's libfabric 1.17 (//bench:compare runs it over both).
constexpr uint32_t kApiVersion = FI_VERSION(1, 17);

// Everything one side opens, in the order it is opened. Close() releases it
// in the reverse order.
struct FabricObjects {
  fi_info* info = nullptr;         // the endpoint's attributes
  fi_info* listen_info = nullptr;  // MSG server: the passive endpoint's
  fid_fabric* fabric = nullptr;
  fid_eq* eq = nullptr;            // MSG: connection events
  fid_pep* pep = nullptr;          // MSG server: the listener
  fid_domain* domain = nullptr;
  fid_cq* tx_cq = nullptr;
  fid_cq* rx_cq = nullptr;
  fid_av* av = nullptr;            // RDM, DGRAM: the peer's address
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;            // only when the provider wants FI_MR_LOCAL
  fi_addr_t peer = FI_ADDR_UNSPEC; // RDM, DGRAM: the peer's AV entry

  // The message buffers, one allocation: the receive half, then the send
  // half, each max_transfer bytes (at least 64, for the final "fin").
  std::vector<char> buffer;
  char* rx_buf = nullptr;
  char* tx_buf = nullptr;
  void* desc = nullptr;  // fi_mr_desc(mr) when registered
  // Operation contexts (FI_CONTEXT2 mode lets the provider use them).
  fi_context2 tx_context = {};
  fi_context2 rx_context = {};
  size_t max_transfer = 0;

  ~FabricObjects() { Close(); }
  // Closes every object, last opened first; 0 or the first error.
  int Close();
};

// Opens everything, connects or exchanges addresses with the peer, and
// posts the first receive. Returns 0 or a negative fi_errno, reported.
int SetUpFabric(const Options& options, bool is_client, OutOfBand& channel,
                FabricObjects& objects);

// Reports a failed call as fi_pingpong does and returns `ret`.
int Report(const char* call, int ret);

}  // namespace pingpong

#endif  // APPS_PINGPONG_FABRIC_SETUP_H_

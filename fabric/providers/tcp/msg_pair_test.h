// File: fabric/providers/tcp/msg_pair_test.h
//
// The fixture of the tcp MSG endpoint tests: a server and a client, each
// with its own fabric (so each side's progress is its own), domain, EQ,
// CQs and counters, connected through a passive endpoint on 127.0.0.1 by
// the real handshake, all through the public C API.
#ifndef FABRIC_PROVIDERS_TCP_MSG_PAIR_TEST_H_
#define FABRIC_PROVIDERS_TCP_MSG_PAIR_TEST_H_

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include <functional>
#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace fabric {

struct PairOptions {
  fi_progress server_progress = FI_PROGRESS_MANUAL;
  fi_progress client_progress = FI_PROGRESS_MANUAL;
  fi_resource_mgmt resource_mgmt = FI_RM_ENABLED;  // both sides
  int extra_mr_mode = 0;  // added to FI_MR_VIRT_ADDR | FI_MR_PROV_KEY
  fi_wait_obj cq_wait_obj = FI_WAIT_NONE;  // of every CQ
  // Called on each domain before its first resource (fi_set_ops).
  std::function<void(fid_domain*)> prepare_domain;
  uint64_t cq_bind_flags = 0;  // added to both CQ binds (selective)
  std::string client_data;  // fi_connect's connection data
  std::string server_data;  // fi_accept's
  std::string server_key;   // domain_attr->auth_key of each side
  std::string client_key;
};

class MsgPairTest : public ::testing::Test {
 protected:
  // Connects client_ to server_; the connection data each side received
  // arrives in connreq_data_ / connected_data_.
  void Connect(const PairOptions& options = {});
  void TearDown() override;

  // The server's passive endpoint (server_.fabric, server_.eq, server_.pep),
  // its address in pep_name_.
  void Listen(const PairOptions& options = {});
  // The client's resources and endpoint, aimed at pep_name_, not connected.
  void OpenClient(const PairOptions& options = {});
  // Opens one side's resources on `info` (its ep not yet bound to them):
  // fabric (when `open_fabric`), domain, EQ, a CQ for each direction, and
  // tx_cntr (FI_SEND | FI_WRITE | FI_READ) and rx_cntr (FI_RECV |
  // FI_REMOTE_WRITE | FI_REMOTE_READ).
  void OpenSide(fixtures::Objects* side, fi_info* info,
                const PairOptions& options, bool open_fabric);
  void OpenEndpoint(fixtures::Objects* side, fi_info* info,
                    uint64_t cq_bind_flags);

  // Advances both sides' progress once (reads of nothing: fi_trywait on
  // the fabric, a zero-entry read of the receive CQ for the domain).
  void Progress();
  // The next completion of `cq`, advancing both sides, within 5 s.
  fi_cq_tagged_entry WaitCompletion(fid_cq* cq);
  // The next error of `cq` (fi_cq_read gives -FI_EAVAIL), within 5 s.
  fi_cq_err_entry WaitError(fid_cq* cq);
  // The next event of `eq` (its data in *data), or -FI_EAVAIL with the
  // error in *error; within 5 s.
  int WaitEvent(fid_eq* eq, std::vector<char>* data,
                fi_eq_err_entry* error = nullptr);
  // True when `cq` stays empty while both sides advance for `ms`.
  bool StaysEmpty(fid_cq* cq, int ms);

  fixtures::Objects server_;
  fixtures::Objects client_;
  fi_info* pep_info_ = nullptr;
  std::vector<char> pep_name_;
  std::string connreq_data_;
  std::string connected_data_;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_MSG_PAIR_TEST_H_

#include "fabric/providers/tcp/msg_pair_test.h"

#include <string.h>

#include <chrono>

namespace fabric {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWait = std::chrono::seconds(5);

fi_info* Hints(fi_progress progress, const std::string& key,
               const PairOptions& options) {
  fi_info* hints = fi_allocinfo();
  hints->domain_attr->resource_mgmt = options.resource_mgmt;
  if (!key.empty()) {
    hints->domain_attr->auth_key = static_cast<uint8_t*>(malloc(key.size()));
    memcpy(hints->domain_attr->auth_key, key.data(), key.size());
    hints->domain_attr->auth_key_size = key.size();
  }
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
  hints->domain_attr->data_progress = progress;
  hints->domain_attr->control_progress = progress;
  hints->domain_attr->mr_mode =
      FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | options.extra_mr_mode;
  hints->addr_format = FI_SOCKADDR_IN;
  return hints;
}

}  // namespace

void MsgPairTest::OpenSide(fixtures::Objects* side, fi_info* info,
                           const PairOptions& options, bool open_fabric) {
  side->info = info;
  if (open_fabric) {
    ASSERT_EQ(fi_fabric(info->fabric_attr, &side->fabric, nullptr), 0);
    fi_eq_attr eq_attr = {};
    eq_attr.wait_obj = FI_WAIT_UNSPEC;
    ASSERT_EQ(fi_eq_open(side->fabric, &eq_attr, &side->eq, nullptr), 0);
  }
  ASSERT_EQ(fi_domain(side->fabric, info, &side->domain, nullptr), 0);
  if (options.prepare_domain) options.prepare_domain(side->domain);
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = options.cq_wait_obj;
  ASSERT_EQ(fi_cq_open(side->domain, &cq_attr, &side->cq, nullptr), 0);
  ASSERT_EQ(fi_cq_open(side->domain, &cq_attr, &side->rx_cq, nullptr), 0);
  fi_cntr_attr cntr_attr = {};
  cntr_attr.events = FI_CNTR_EVENTS_COMP;
  cntr_attr.wait_obj = FI_WAIT_UNSPEC;
  ASSERT_EQ(fi_cntr_open(side->domain, &cntr_attr, &side->tx_cntr, nullptr),
            0);
  ASSERT_EQ(fi_cntr_open(side->domain, &cntr_attr, &side->rx_cntr, nullptr),
            0);
}

void MsgPairTest::OpenEndpoint(fixtures::Objects* side, fi_info* info,
                               uint64_t cq_bind_flags) {
  ASSERT_EQ(fi_endpoint(side->domain, info, &side->ep, nullptr), 0);
  ASSERT_EQ(fi_ep_bind(side->ep, &side->eq->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(side->ep, &side->cq->fid, FI_TRANSMIT | cq_bind_flags),
            0);
  ASSERT_EQ(fi_ep_bind(side->ep, &side->rx_cq->fid, FI_RECV | cq_bind_flags),
            0);
  ASSERT_EQ(fi_ep_bind(side->ep, &side->tx_cntr->fid,
                       FI_SEND | FI_WRITE | FI_READ),
            0);
  ASSERT_EQ(fi_ep_bind(side->ep, &side->rx_cntr->fid,
                       FI_RECV | FI_REMOTE_WRITE | FI_REMOTE_READ),
            0);
  ASSERT_EQ(fi_enable(side->ep), 0);
}

void MsgPairTest::Listen(const PairOptions& options) {
  fi_info* hints = Hints(options.server_progress, options.server_key, options);
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), "127.0.0.1", "0", FI_SOURCE, hints,
                       &pep_info_),
            0);
  fi_freeinfo(hints);
  ASSERT_EQ(fi_fabric(pep_info_->fabric_attr, &server_.fabric, nullptr), 0);
  fi_eq_attr eq_attr = {};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  ASSERT_EQ(fi_eq_open(server_.fabric, &eq_attr, &server_.eq, nullptr), 0);
  ASSERT_EQ(fi_passive_ep(server_.fabric, pep_info_, &server_.pep, nullptr), 0);
  ASSERT_EQ(fi_pep_bind(server_.pep, &server_.eq->fid, 0), 0);
  ASSERT_EQ(fi_listen(server_.pep), 0);
  size_t len = 128;
  pep_name_.resize(len);
  ASSERT_EQ(fi_getname(&server_.pep->fid, pep_name_.data(), &len), 0);
  pep_name_.resize(len);
}

void MsgPairTest::OpenClient(const PairOptions& options) {
  fi_info* hints = Hints(options.client_progress, options.client_key, options);
  hints->dest_addr = malloc(pep_name_.size());
  memcpy(hints->dest_addr, pep_name_.data(), pep_name_.size());
  hints->dest_addrlen = pep_name_.size();
  fi_info* info = nullptr;
  ASSERT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info),
            0);
  fi_freeinfo(hints);
  OpenSide(&client_, info, options, true);
  OpenEndpoint(&client_, info, options.cq_bind_flags);
}

void MsgPairTest::Connect(const PairOptions& options) {
  Listen(options);
  OpenClient(options);
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(),
                       options.client_data.data(), options.client_data.size()),
            0);

  // Server: the request, an endpoint on it, fi_accept.
  std::vector<char> event;
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNREQ);
  fi_eq_cm_entry entry;
  memcpy(&entry, event.data(), sizeof(entry));
  EXPECT_EQ(entry.fid, &server_.pep->fid);
  connreq_data_.assign(event.begin() + sizeof(entry), event.end());
  OpenSide(&server_, entry.info, options, false);
  OpenEndpoint(&server_, entry.info, options.cq_bind_flags);
  ASSERT_EQ(fi_accept(server_.ep, options.server_data.data(),
                      options.server_data.size()),
            0);
  ASSERT_EQ(WaitEvent(server_.eq, &event), FI_CONNECTED);
  memcpy(&entry, event.data(), sizeof(entry));
  EXPECT_EQ(entry.fid, &server_.ep->fid);
  ASSERT_EQ(WaitEvent(client_.eq, &event), FI_CONNECTED);
  memcpy(&entry, event.data(), sizeof(entry));
  EXPECT_EQ(entry.fid, &client_.ep->fid);
  connected_data_.assign(event.begin() + sizeof(entry), event.end());
}

void MsgPairTest::TearDown() {
  EXPECT_EQ(fixtures::CloseObjects(&client_), 0);
  EXPECT_EQ(fixtures::CloseObjects(&server_), 0);
  fi_freeinfo(pep_info_);
}

void MsgPairTest::Progress() {
  for (fixtures::Objects* side : {&server_, &client_}) {
    // The fabric's engine (connection setup), then the domain's.
    if (side->fabric != nullptr) fi_trywait(side->fabric, nullptr, 0);
    if (side->rx_cq != nullptr) fi_cq_read(side->rx_cq, nullptr, 0);
  }
}

fi_cq_tagged_entry MsgPairTest::WaitCompletion(fid_cq* cq) {
  fi_cq_tagged_entry entry = {};
  auto deadline = Clock::now() + kWait;
  while (Clock::now() < deadline) {
    Progress();
    ssize_t rc = fi_cq_read(cq, &entry, 1);
    if (rc == 1) return entry;
    if (rc != -FI_EAGAIN) {
      ADD_FAILURE() << "fi_cq_read: " << fi_strerror(static_cast<int>(-rc));
      return entry;
    }
  }
  ADD_FAILURE() << "no completion within 5 s";
  return entry;
}

fi_cq_err_entry MsgPairTest::WaitError(fid_cq* cq) {
  fi_cq_err_entry error = {};
  auto deadline = Clock::now() + kWait;
  while (Clock::now() < deadline) {
    Progress();
    fi_cq_tagged_entry entry;
    ssize_t rc = fi_cq_read(cq, &entry, 1);
    if (rc == -FI_EAVAIL) {
      EXPECT_EQ(fi_cq_readerr(cq, &error, 0), 1);
      return error;
    }
    if (rc != -FI_EAGAIN) {
      ADD_FAILURE() << "expected an error, fi_cq_read gave " << rc;
      return error;
    }
  }
  ADD_FAILURE() << "no error within 5 s";
  return error;
}

int MsgPairTest::WaitEvent(fid_eq* eq, std::vector<char>* data,
                           fi_eq_err_entry* error) {
  uint32_t event = 0;
  ssize_t rc = fixtures::WaitForEvent(eq, &event, data, error, kWait,
                                      [this] { Progress(); });
  if (rc == -FI_EAGAIN) ADD_FAILURE() << "no event within 5 s";
  return rc > 0 ? static_cast<int>(event) : static_cast<int>(rc);
}

bool MsgPairTest::StaysEmpty(fid_cq* cq, int ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < deadline) {
    Progress();
    fi_cq_tagged_entry entry;
    if (fi_cq_read(cq, &entry, 1) != -FI_EAGAIN) return false;
  }
  return true;
}

}  // namespace fabric

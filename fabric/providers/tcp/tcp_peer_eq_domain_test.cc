// Peer EQs and peer domains (fi_peer(3)) with real tcp objects.
// Peer EQ: an EQ opened with FI_PEER hands every event and error its
// objects post (here: an AV's asynchronous inserts) to the owner's EQ, one
// of ours or a foreign one (through fi_eq_write). Peer domain: a domain
// opened with fi_domain2(FI_PEER) serves remote accesses to the owner
// domain's memory regions, and keeps the owner open.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext.h>
#include <rdma/fi_rma.h>
#include <string.h>

#include <chrono>
#include <vector>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace {

// libfabric's flag for error entries written with fi_eq_write.
constexpr uint64_t kEqWriteError = 1ULL << 60;

// A foreign owner EQ: what its write was given.
struct ForeignEq {
  fid_eq fid = {};
  fi_ops_eq ops = {};
  struct Write {
    uint32_t event;
    std::vector<char> data;
    uint64_t flags;
  };
  std::vector<Write> writes;
};

ssize_t RecordEqWrite(fid_eq* eq, uint32_t event, const void* buf, size_t len,
                      uint64_t flags) {
  auto* owner = reinterpret_cast<ForeignEq*>(eq);  // fid is its first member
  const char* bytes = static_cast<const char*>(buf);
  owner->writes.push_back({event, {bytes, bytes + len}, flags});
  return static_cast<ssize_t>(len);
}

class TcpPeerEqDomainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fabric::fixtures::OpenLoopbackDomain(
                  FI_EP_RDM, FI_MSG | FI_RMA,
                  [](fi_info* hints) {
                    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
                    hints->domain_attr->mr_mode =
                        FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
                  },
                  &loopback_),
              0);
  }
  void TearDown() override {
    EXPECT_EQ(fabric::fixtures::CloseObjects(&loopback_), 0);
  }

  // An AV of loopback_'s domain that reports inserts on `eq`; inserts one
  // valid and one malformed address (FI_AV_COMPLETE with 1, and an error
  // for index 1).
  void InsertThroughAv(fid_eq* eq) {
    fi_av_attr attr = {};
    attr.type = FI_AV_TABLE;
    attr.flags = FI_EVENT;
    fid_av* av = nullptr;
    ASSERT_EQ(fi_av_open(loopback_.domain, &attr, &av, nullptr), 0);
    ASSERT_EQ(fi_av_bind(av, &eq->fid, 0), 0);
    sockaddr_in addresses[2] = {};
    addresses[0].sin_family = AF_INET;
    addresses[0].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addresses[0].sin_port = htons(7000);
    addresses[1].sin_family = AF_UNIX;  // not an IP address
    fi_addr_t out[2];
    int context;
    ASSERT_EQ(fi_av_insert(av, addresses, 2, out, 0, &context), 0);
    ASSERT_EQ(fi_close(&av->fid), 0);
  }

  fabric::fixtures::Objects loopback_;
};

TEST_F(TcpPeerEqDomainTest, APeerEqHandsEventsAndErrorsToOurEq) {
  fi_eq_attr attr = {};
  fid_eq* owner = nullptr;
  ASSERT_EQ(fi_eq_open(loopback_.fabric, &attr, &owner, nullptr), 0);
  fi_peer_eq_context context = {sizeof(context), owner};
  attr.flags = FI_PEER;
  fid_eq* peer = nullptr;
  ASSERT_EQ(fi_eq_open(loopback_.fabric, &attr, &peer, &context), 0);
  InsertThroughAv(peer);

  uint32_t event;
  fi_eq_entry entry;
  EXPECT_EQ(fi_eq_read(peer, &event, &entry, sizeof(entry), 0), -FI_ENOSYS);
  ASSERT_EQ(fi_eq_read(owner, &event, &entry, sizeof(entry), 0), -FI_EAVAIL);
  fi_eq_err_entry error = {};
  ASSERT_EQ(fi_eq_readerr(owner, &error, 0),
            static_cast<ssize_t>(sizeof(error)));
  EXPECT_EQ(error.data, 1u);  // the malformed address
  EXPECT_NE(error.err, 0);
  ASSERT_EQ(fi_eq_read(owner, &event, &entry, sizeof(entry), 0),
            static_cast<ssize_t>(sizeof(entry)));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_AV_COMPLETE));
  EXPECT_EQ(entry.data, 1u);  // one inserted
  EXPECT_EQ(fi_close(&peer->fid), 0);
  EXPECT_EQ(fi_close(&owner->fid), 0);
}

TEST_F(TcpPeerEqDomainTest, APeerEqHandsEventsAndErrorsToAForeignOwner) {
  ForeignEq owner;
  owner.fid.fid.fclass = FI_CLASS_EQ;
  owner.ops.size = sizeof(fi_ops_eq);
  owner.ops.write = RecordEqWrite;
  owner.fid.ops = &owner.ops;
  fi_peer_eq_context context = {sizeof(context), &owner.fid};
  fi_eq_attr attr = {};
  attr.flags = FI_PEER;
  fid_eq* peer = nullptr;
  ASSERT_EQ(fi_eq_open(loopback_.fabric, &attr, &peer, &context), 0);
  InsertThroughAv(peer);
  ASSERT_EQ(owner.writes.size(), 2u);
  EXPECT_EQ(owner.writes[0].flags, kEqWriteError);
  ASSERT_EQ(owner.writes[0].data.size(), sizeof(fi_eq_err_entry));
  fi_eq_err_entry error;
  memcpy(&error, owner.writes[0].data.data(), sizeof(error));
  EXPECT_EQ(error.data, 1u);
  EXPECT_EQ(owner.writes[1].flags, 0u);
  EXPECT_EQ(owner.writes[1].event, static_cast<uint32_t>(FI_AV_COMPLETE));
  EXPECT_EQ(fi_close(&peer->fid), 0);
}

TEST_F(TcpPeerEqDomainTest, MalformedPeerContextsAreRefused) {
  fi_eq_attr attr = {};
  attr.flags = FI_PEER;
  fid_eq* eq = nullptr;
  EXPECT_EQ(fi_eq_open(loopback_.fabric, &attr, &eq, nullptr), -FI_EINVAL);
  fi_peer_eq_context short_context = {sizeof(short_context) - 1, nullptr};
  EXPECT_EQ(fi_eq_open(loopback_.fabric, &attr, &eq, &short_context),
            -FI_EINVAL);
  fi_peer_eq_context no_eq = {sizeof(no_eq), nullptr};
  EXPECT_EQ(fi_eq_open(loopback_.fabric, &attr, &eq, &no_eq), -FI_EINVAL);

  fid_domain* domain = nullptr;
  EXPECT_EQ(
      fi_domain2(loopback_.fabric, loopback_.info, &domain, FI_PEER, nullptr),
      -FI_EINVAL);
  fi_peer_domain_context no_domain = {sizeof(no_domain), nullptr};
  EXPECT_EQ(fi_domain2(loopback_.fabric, loopback_.info, &domain, FI_PEER,
                       &no_domain),
            -FI_EINVAL);
  // A domain of another library: its regions cannot be looked up.
  fid_domain foreign = {};
  foreign.fid.fclass = FI_CLASS_DOMAIN;
  fi_peer_domain_context other = {sizeof(other), &foreign};
  EXPECT_EQ(
      fi_domain2(loopback_.fabric, loopback_.info, &domain, FI_PEER, &other),
      -FI_EINVAL);
}

// An endpoint of a peer domain is the target of an RMA write that names a
// region of the owner domain; an endpoint of an ordinary second domain
// refuses the same key.
TEST_F(TcpPeerEqDomainTest, APeerDomainServesTheOwnersRegions) {
  fid_domain* owner = loopback_.domain;
  fi_peer_domain_context context = {sizeof(context), owner};
  fid_domain* peer = nullptr;
  ASSERT_EQ(
      fi_domain2(loopback_.fabric, loopback_.info, &peer, FI_PEER, &context),
      0);
  EXPECT_EQ(fi_close(&owner->fid), -FI_EBUSY);  // the peer keeps it
  fid_domain* stranger = nullptr;
  ASSERT_EQ(fi_domain(loopback_.fabric, loopback_.info, &stranger, nullptr), 0);
  uint64_t target = 0;
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(owner, &target, sizeof(target), FI_REMOTE_WRITE, 0, 0, 0,
                      &mr, nullptr),
            0);

  struct Side {
    fid_av* av = nullptr;
    fid_cq* cq = nullptr;
    fid_ep* ep = nullptr;
  };
  auto open = [this](fid_domain* domain, Side* side) {
    fi_av_attr av_attr = {};
    av_attr.type = FI_AV_TABLE;
    fi_cq_attr cq_attr = {};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    ASSERT_EQ(fi_av_open(domain, &av_attr, &side->av, nullptr), 0);
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &side->cq, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain, loopback_.info, &side->ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(side->ep, &side->av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(side->ep, &side->cq->fid, FI_TRANSMIT | FI_RECV), 0);
    ASSERT_EQ(fi_enable(side->ep), 0);
  };
  Side initiator, served, refused;
  open(owner, &initiator);
  open(peer, &served);
  open(stranger, &refused);
  uint64_t value = 0x1234;
  for (Side* target_side : {&served, &refused}) {
    char name[64];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&target_side->ep->fid, name, &len), 0);
    fi_addr_t dest;
    ASSERT_EQ(fi_av_insert(initiator.av, name, 1, &dest, 0, nullptr), 1);
    ASSERT_EQ(
        fi_write(initiator.ep, &value, sizeof(value), nullptr, dest,
                 reinterpret_cast<uint64_t>(&target), fi_mr_key(mr), nullptr),
        0);
    fi_cq_tagged_entry entry;
    ssize_t rc = -FI_EAGAIN;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
      fi_cq_read(target_side->cq, nullptr, 0);  // the target's progress
      rc = fi_cq_read(initiator.cq, &entry, 1);
    }
    if (target_side == &served) {
      EXPECT_EQ(rc, 1);
      EXPECT_EQ(target, 0x1234u);
      target = 0;
    } else {
      ASSERT_EQ(rc, -FI_EAVAIL);
      fi_cq_err_entry error = {};
      ASSERT_EQ(fi_cq_readerr(initiator.cq, &error, 0), 1);
      EXPECT_EQ(error.err, FI_EACCES);
      EXPECT_EQ(target, 0u);
    }
  }
  for (Side* side : {&initiator, &served, &refused}) {
    for (fid* object : {&side->ep->fid, &side->cq->fid, &side->av->fid}) {
      EXPECT_EQ(fi_close(object), 0);
    }
  }
  EXPECT_EQ(fi_close(&mr->fid), 0);
  EXPECT_EQ(fi_close(&stranger->fid), 0);
  EXPECT_EQ(fi_close(&peer->fid), 0);
}

// A peer domain's endpoints take the owner's AV (in their own address
// format), counters and memory regions, and refuse another domain's
// (-FI_EINVAL).
TEST_F(TcpPeerEqDomainTest, APeerDomainsEndpointsTakeOnlyTheOwnersObjects) {
  fid_domain* owner = loopback_.domain;
  fi_peer_domain_context context = {sizeof(context), owner};
  fid_domain* peer = nullptr;
  ASSERT_EQ(
      fi_domain2(loopback_.fabric, loopback_.info, &peer, FI_PEER, &context),
      0);
  fid_domain* stranger = nullptr;
  ASSERT_EQ(fi_domain(loopback_.fabric, loopback_.info, &stranger, nullptr), 0);
  fid_av* avs[2] = {};
  fid_cntr* cntrs[2] = {};
  fid_mr* mrs[2] = {};
  char buffer[16];
  fid_domain* domains[2] = {owner, stranger};
  for (int i = 0; i < 2; ++i) {
    fi_av_attr av_attr = {};
    fi_cntr_attr cntr_attr = {};
    fid_domain* domain = domains[i];
    ASSERT_EQ(fi_av_open(domain, &av_attr, &avs[i], nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain, &cntr_attr, &cntrs[i], nullptr), 0);
    ASSERT_EQ(fi_mr_reg(domain, buffer, sizeof(buffer), FI_RECV, 0, 0, 0,
                        &mrs[i], nullptr),
              0);
  }
  fi_cq_attr cq_attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(peer, &cq_attr, &cq, nullptr), 0);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(peer, loopback_.info, &ep, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(ep, &avs[1]->fid, 0), -FI_EINVAL);
  EXPECT_EQ(fi_ep_bind(ep, &cntrs[1]->fid, FI_SEND), -FI_EINVAL);
  EXPECT_EQ(fi_ep_bind(ep, &avs[0]->fid, 0), 0);
  EXPECT_EQ(fi_ep_bind(ep, &cntrs[0]->fid, FI_SEND), 0);
  ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
  ASSERT_EQ(fi_enable(ep), 0);
  // (Another domain's descriptor is refused only where descriptors are
  // read, with FI_MR_HMEM: app_buffer_test.)
  void* owner_desc = fi_mr_desc(mrs[0]);
  EXPECT_EQ(
      fi_recv(ep, buffer, sizeof(buffer), owner_desc, FI_ADDR_UNSPEC, nullptr),
      0);
  // An endpoint in another address format cannot take the owner's AV.
  fi_info* other_format = fi_dupinfo(loopback_.info);
  free(other_format->src_addr);
  other_format->src_addr = nullptr;
  other_format->src_addrlen = 0;
  other_format->addr_format = FI_ADDR_STR;
  fid_ep* str_ep = nullptr;
  ASSERT_EQ(fi_endpoint(peer, other_format, &str_ep, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(str_ep, &avs[0]->fid, 0), -FI_EINVAL);
  fi_freeinfo(other_format);
  for (fid* object : {&str_ep->fid, &ep->fid, &cq->fid}) {
    EXPECT_EQ(fi_close(object), 0);
  }
  for (int i = 0; i < 2; ++i) {
    for (fid* object : {&mrs[i]->fid, &cntrs[i]->fid, &avs[i]->fid}) {
      EXPECT_EQ(fi_close(object), 0);
    }
  }
  EXPECT_EQ(fi_close(&stranger->fid), 0);
  EXPECT_EQ(fi_close(&peer->fid), 0);
}

// fi_export_fid is reserved (fi_peer(3)): every object says -FI_ENOSYS.
TEST_F(TcpPeerEqDomainTest, ExportingAFidIsNotImplemented) {
  fi_eq_attr eq_attr = {};
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(loopback_.fabric, &eq_attr, &eq, nullptr), 0);
  fi_cq_attr cq_attr = {};
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(loopback_.domain, &cq_attr, &cq, nullptr), 0);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(loopback_.domain, loopback_.info, &ep, nullptr), 0);
  for (fid* object : {&loopback_.fabric->fid, &loopback_.domain->fid, &eq->fid,
                      &cq->fid, &ep->fid}) {
    fid* exported = nullptr;
    EXPECT_EQ(fi_export_fid(object, 0, &exported, nullptr), -FI_ENOSYS)
        << "fclass " << object->fclass;
    EXPECT_EQ(exported, nullptr);
  }
  for (fid* object : {&ep->fid, &cq->fid, &eq->fid}) {
    EXPECT_EQ(fi_close(object), 0);
  }
}

// No endpoint of ours needs peer transfers, so none takes part in them:
// fi_endpoint2 with FI_PEER_TRANSFER is -FI_EINVAL, as fi_peer(3) asks of
// providers without the support; unknown flags are -FI_EBADFLAGS.
TEST_F(TcpPeerEqDomainTest, PeerTransfersAreRefused) {
  EXPECT_EQ(loopback_.info->mode & FI_PEER_TRANSFER, 0u);
  fi_ops_transfer_peer ops = {};
  fi_peer_transfer_context context = {sizeof(context), loopback_.info, nullptr,
                                      &ops};
  fid_ep* ep = nullptr;
  EXPECT_EQ(fi_endpoint2(loopback_.domain, loopback_.info, &ep,
                         FI_PEER_TRANSFER, &context),
            -FI_EINVAL);
  EXPECT_EQ(
      fi_endpoint2(loopback_.domain, loopback_.info, &ep, 1ULL << 2, nullptr),
      -FI_EBADFLAGS);
  EXPECT_EQ(ep, nullptr);
}

}  // namespace

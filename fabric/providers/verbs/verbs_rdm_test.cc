// Two verbs RDM endpoints of one process over RC queue pairs (rxm_ep.h):
// a tagged message, its source reported through the AV. Runs where an RDMA
// device with an ACTIVE port and an IPv4 address exists (the soft-RoCE
// guest's rxe0, verbs_in_guest_test); elsewhere it is skipped and says why.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <string.h>

#include <chrono>

#include "fabric/fixtures/loopback.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

TEST(VerbsRdmTest, MessagesBetweenTwoRdmEndpoints) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("verbs");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_SOURCE;
  hints->addr_format = FI_SOCKADDR_IN;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) {
    GTEST_SKIP() << "verbs offers no RDM endpoint here (fi_getinfo: "
                 << fi_strerror(-rc)
                 << "): no RDMA device with an ACTIVE port and an IPv4 "
                    "address";
  }
  fixtures::Objects side[2];
  fi_addr_t peer[2] = {FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL};
  for (fixtures::Objects& s : side) {
    ASSERT_EQ(fixtures::OpenRdmEndpoint(info, FI_CQ_FORMAT_TAGGED, &s), 0);
  }
  for (int i = 0; i < 2; ++i) {
    char name[64];
    size_t len = sizeof(name);
    ASSERT_EQ(fi_getname(&side[1 - i].ep->fid, name, &len), 0);
    ASSERT_EQ(fi_av_insert(side[i].av, name, 1, &peer[i], 0, nullptr), 1);
  }
  char in[16] = {};
  ASSERT_EQ(fi_trecv(side[1].ep, in, sizeof(in), nullptr, FI_ADDR_UNSPEC, 7, 0,
                     nullptr),
            0);
  ASSERT_EQ(fi_tsend(side[0].ep, "over rc", 8, nullptr, peer[0], 7, nullptr),
            0);
  int done = 0;
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done < 2 && std::chrono::steady_clock::now() < deadline) {
    fi_cq_tagged_entry entry;
    for (int i = 0; i < 2; ++i) {
      fi_addr_t from = FI_ADDR_NOTAVAIL;
      ssize_t n = fi_cq_readfrom(side[i].cq, &entry, 1, &from);
      ASSERT_NE(n, -FI_EAVAIL);
      if (n == 1) ++done;
      if (n == 1 && i == 1) source = from;
    }
  }
  EXPECT_EQ(done, 2);
  EXPECT_STREQ(in, "over rc");
  EXPECT_EQ(source, peer[1]);
  for (fixtures::Objects& s : side) EXPECT_EQ(fixtures::CloseObjects(&s), 0);
  fi_freeinfo(info);
}

}  // namespace
}  // namespace fabric

#include "fabric/providers/util/loopback_domain_test.h"

#include <arpa/inet.h>
#include <string.h>

namespace fabric {

sockaddr_in Ipv4(const char* host, uint16_t port) {
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, host, &addr.sin_addr);
  return addr;
}

void LoopbackDomainTest::OpenDomain(
    const std::function<void(fi_info*)>& adjust, uint32_t version) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  if (adjust) adjust(hints);
  int rc = fi_getinfo(version, nullptr, nullptr, 0, hints, &info_);
  fi_freeinfo(hints);
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
  ASSERT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
}

void LoopbackDomainTest::TearDown() {
  if (domain_ != nullptr) {
    EXPECT_EQ(fi_close(&domain_->fid), 0);
  }
  if (fabric_ != nullptr) {
    EXPECT_EQ(fi_close(&fabric_->fid), 0);
  }
  fi_freeinfo(info_);
}

}  // namespace fabric

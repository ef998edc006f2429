// File: fabric/providers/util/loopback_domain_test.h
//
// The fixture the object-layer tests share: the tcp provider's domain on
// "lo", opened through the C API (fi_getinfo, fi_fabric, fi_domain).
// A test's own TearDown closes its objects, then calls this one, which
// closes the domain and the fabric (children first) and frees the info.
#ifndef FABRIC_PROVIDERS_UTIL_LOOPBACK_DOMAIN_TEST_H_
#define FABRIC_PROVIDERS_UTIL_LOOPBACK_DOMAIN_TEST_H_

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <netinet/in.h>

#include <functional>

#include "gtest/gtest.h"

namespace fabric {

// An IPv4 socket address, "192.0.2.1" and port.
sockaddr_in Ipv4(const char* host, uint16_t port);

class LoopbackDomainTest : public ::testing::Test {
 protected:
  // Fills info_, fabric_ and domain_; `adjust` edits the hints (prov_name
  // "tcp", domain name "lo") before fi_getinfo.
  void OpenDomain(const std::function<void(fi_info*)>& adjust = nullptr,
                  uint32_t version = FI_VERSION(1, 18));
  void TearDown() override;

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_LOOPBACK_DOMAIN_TEST_H_

// File: fabric/api/cxx/loopback_testing.h
//
// For tests: the tcp provider's fabric and domain on the loopback interface,
// opened through this API.
//
//   absl::StatusOr<ofi::testing::Loopback> lo = ofi::testing::OpenLoopback();
//   ASSERT_TRUE(lo.ok()) << lo.status();
//   absl::StatusOr<ofi::Cq> cq = ofi::OpenCq(lo->domain, attr);
#ifndef FABRIC_API_CXX_LOOPBACK_TESTING_H_
#define FABRIC_API_CXX_LOOPBACK_TESTING_H_

#include <rdma/fabric.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "fabric/api/cxx/domain.h"
#include "fabric/api/cxx/fabric.h"

namespace ofi::testing {

// Members are destroyed in reverse order: the domain before its fabric.
struct Loopback {
  Info info;
  Fabric fabric;
  Domain domain;
};

// fi_getinfo with hints prov_name "tcp", domain name "lo", `mr_mode` and
// endpoint `type`, then the fabric and domain of the first entry.
absl::StatusOr<Loopback> OpenLoopback(int mr_mode = 0,
                                      fi_ep_type type = FI_EP_UNSPEC);

}  // namespace ofi::testing

#endif  // FABRIC_API_CXX_LOOPBACK_TESTING_H_

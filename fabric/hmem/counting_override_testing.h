// File: fabric/hmem/counting_override_testing.h
//
// For tests: an FI_SET_OPS_HMEM_OVERRIDE that copies like host memory and
// counts what it is asked to copy, so a test can check that a provider
// moves every byte through the override.
//
//   fi_hmem_override_ops ops = CountingOverride::Ops();
//   fi_set_ops(&domain->fid, FI_SET_OPS_HMEM_OVERRIDE, 0, &ops, nullptr);
//   ... transfer ...
//   EXPECT_EQ(CountingOverride::to_bytes.load(), received);
#ifndef FABRIC_HMEM_COUNTING_OVERRIDE_TESTING_H_
#define FABRIC_HMEM_COUNTING_OVERRIDE_TESTING_H_

#include <rdma/fi_domain.h>

#include <atomic>
#include <cstddef>

namespace fabric {

struct CountingOverride {
  static fi_hmem_override_ops Ops();
  static void Reset();

  static std::atomic<int> from_calls;     // copy_from_hmem_iov
  static std::atomic<size_t> from_bytes;
  static std::atomic<int> to_calls;       // copy_to_hmem_iov
  static std::atomic<size_t> to_bytes;
  static std::atomic<int> non_system;     // calls for another iface
};

}  // namespace fabric

#endif  // FABRIC_HMEM_COUNTING_OVERRIDE_TESTING_H_

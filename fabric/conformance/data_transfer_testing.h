// File: fabric/conformance/data_transfer_testing.h
//
// The fixture of the data transfer tests (data_transfer_test.cc,
// rma_atomic_test.cc): an endpoint pair opened with the capabilities a
// test needs, skipped where the case does not claim them.
#ifndef FABRIC_CONFORMANCE_DATA_TRANSFER_TESTING_H_
#define FABRIC_CONFORMANCE_DATA_TRANSFER_TESTING_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {

using Clock = std::chrono::steady_clock;

class DataTransferTest : public PairTest {
 protected:
  // Opens the pair with `caps`; skips unreliable types when `reliable`.
  bool Open(uint64_t caps, size_t region = 0, bool reliable = true) {
    PairOptions options;
    options.caps = caps;
    options.region_size = region;
    absl::Status opened = OpenPair(options);
    if (absl::IsNotFound(opened)) {
      skip_ = std::string(opened.message());
      return false;
    }
    EXPECT_TRUE(opened.ok()) << opened;
    if (!opened.ok()) return false;
    if (reliable && !pair_.Reliable()) {
      skip_ = "datagrams may be lost";
      return false;
    }
    return true;
  }

  // The next completion of `side` that is not a send's (sends of a test
  // complete on their own schedule); fails the test after 10 s.
  Completion NextReceive(Side& side) {
    while (true) {
      absl::StatusOr<Completion> c = side.Wait();
      EXPECT_TRUE(c.ok()) << c.status();
      if (!c.ok() || !(c->entry.flags & FI_SEND))
        return c.ok() ? *c : Completion{};
    }
  }

  // Waits for `count` transmit completions on a.
  void WaitSends(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      absl::StatusOr<Completion> c = a().Wait();
      ASSERT_TRUE(c.ok()) << c.status();
    }
  }

  std::string skip_;
};

#define OPEN_OR_SKIP(...)       \
  do {                          \
    if (!Open(__VA_ARGS__)) {   \
      if (HasFailure()) return; \
      GTEST_SKIP() << skip_;    \
    }                           \
  } while (0)

inline std::vector<char> Pattern(size_t size, int seed) {
  std::vector<char> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 131 + seed) >> 3);
  }
  return bytes;
}

}  // namespace ofi::conformance

#endif  // FABRIC_CONFORMANCE_DATA_TRANSFER_TESTING_H_

// The transfer sizes a run goes through, as fi_pingpong picks them.
#ifndef APPS_PINGPONG_TEST_SIZES_H_
#define APPS_PINGPONG_TEST_SIZES_H_

#include <cstddef>
#include <vector>

#include "apps/pingpong/options.h"

namespace pingpong {

// fi_pingpong's largest buffer without -S: 4 MiB + 2 MiB.
inline constexpr size_t kMaxTransferSize = (1 << 22) + (1 << 21);

// The sizes for `options`, none above `max_size` (the endpoint's limit):
// -S N: N (none if too large); -S all: 0, 1, then 2^i and 1.5 * 2^i;
// otherwise 64, 256, 1 Ki, 4 Ki, 64 Ki and 1 MiB.
std::vector<int> TestSizes(const Options& options, size_t max_size);

}  // namespace pingpong

#endif  // APPS_PINGPONG_TEST_SIZES_H_

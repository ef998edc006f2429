#include "apps/pingpong/test_sizes.h"

namespace pingpong {

std::vector<int> TestSizes(const Options& options, size_t max_size) {
  std::vector<int> sizes;
  switch (options.sizes) {
    case SizeChoice::kOne:
      if (static_cast<size_t>(options.transfer_size) <= max_size) {
        sizes.push_back(options.transfer_size);
      }
      break;
    case SizeChoice::kDefaultList:
      for (int size : {64, 256, 1024, 4096, 65536, 1048576}) {
        if (static_cast<size_t>(size) > max_size) break;
        sizes.push_back(size);
      }
      break;
    case SizeChoice::kAll:
      for (int i = 0;; i++) {
        size_t power_of_two = i == 0 ? 0 : size_t{1} << i;
        size_t half_up = i == 0 ? 1 : power_of_two + power_of_two / 2;
        if (power_of_two > max_size) break;
        sizes.push_back(static_cast<int>(power_of_two));
        if (half_up > max_size) break;
        sizes.push_back(static_cast<int>(half_up));
      }
      break;
  }
  return sizes;
}

}  // namespace pingpong

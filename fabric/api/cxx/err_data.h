// File: fabric/api/cxx/err_data.h
//
// Copies the err_data of an error entry fi_eq_readerr / fi_cq_readerr just
// filled (valid only until the next readerr) and clears the entry's pointer
// to it, so the C++ error owns its bytes.
#ifndef FABRIC_API_CXX_ERR_DATA_H_
#define FABRIC_API_CXX_ERR_DATA_H_

#include <cstdint>
#include <vector>

namespace ofi {

template <typename ErrEntry>
std::vector<uint8_t> TakeErrData(ErrEntry& entry) {
  std::vector<uint8_t> bytes;
  const auto* data = static_cast<const uint8_t*>(entry.err_data);
  if (data != nullptr) bytes.assign(data, data + entry.err_data_size);
  entry.err_data = nullptr;
  entry.err_data_size = 0;
  return bytes;
}

}  // namespace ofi

#endif  // FABRIC_API_CXX_ERR_DATA_H_

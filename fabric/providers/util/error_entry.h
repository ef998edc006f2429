// File: fabric/providers/util/error_entry.h
//
// Hands an error entry to the application as fi_eq_readerr and fi_cq_readerr
// do. err_data goes into the application's own buffer when it passes one
// (API >= 1.5, err_data and err_data_size set), cut to that size; otherwise
// the entry points at `kept`, which stays valid until the next readerr.
// Before API 1.5 the entry structs ended before err_data_size, so that field
// is not written for older applications.
#ifndef FABRIC_PROVIDERS_UTIL_ERROR_ENTRY_H_
#define FABRIC_PROVIDERS_UTIL_ERROR_ENTRY_H_

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <vector>

namespace fabric {

// ErrEntry is fi_eq_err_entry or fi_cq_err_entry; `entry` is the queued
// error (its err_data fields are ignored) and `data` its err_data.
template <typename ErrEntry>
void DeliverErrorEntry(uint32_t api_version, ErrEntry entry,
                       std::vector<char> data, std::vector<char>* kept,
                       ErrEntry* buf) {
  bool has_size_field = FI_VERSION_GE(api_version, FI_VERSION(1, 5));
  if (has_size_field && buf->err_data != nullptr && buf->err_data_size > 0) {
    size_t n = std::min(buf->err_data_size, data.size());
    memcpy(buf->err_data, data.data(), n);
    entry.err_data = buf->err_data;
    entry.err_data_size = n;
  } else {
    *kept = std::move(data);
    entry.err_data = kept->empty() ? nullptr : kept->data();
    entry.err_data_size = kept->size();
  }
  memcpy(buf, &entry,
         has_size_field ? sizeof(entry) : offsetof(ErrEntry, err_data_size));
}

// fi_eq_strerror / fi_cq_strerror: the text of an error code, copied into
// buf when one is given. Our providers' prov_errno is always the positive
// fi_errno of the entry's err (libfabric's providers mix signs); either
// sign is accepted here.
inline const char* ErrorText(int prov_errno, char* buf, size_t len) {
  const char* text = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);
  if (buf == nullptr || len == 0) return text;
  snprintf(buf, len, "%s", text);
  return buf;
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_ERROR_ENTRY_H_

// File: fabric/api/entry/getinfo_testing.h
//
// For the fi_getinfo tests: fi_getinfo through the C API as applications
// call it, and the list it returns as a vector.
#ifndef FABRIC_API_ENTRY_GETINFO_TESTING_H_
#define FABRIC_API_ENTRY_GETINFO_TESTING_H_

#include <netinet/in.h>
#include <rdma/fabric.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace getinfo_testing {

inline constexpr uint32_t kVersion = FI_VERSION(1, 18);

struct InfoFree {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
using Info = std::unique_ptr<fi_info, InfoFree>;

inline Info Hints() { return Info(fi_allocinfo()); }

inline int GetInfo(Info* out, const fi_info* hints, const char* node = nullptr,
                   const char* service = nullptr, uint64_t flags = 0,
                   uint32_t version = kVersion) {
  fi_info* info = nullptr;
  int rc = fi_getinfo(version, node, service, flags, hints, &info);
  out->reset(info);
  return rc;
}

inline std::vector<fi_info*> Items(const Info& list) {
  std::vector<fi_info*> items;
  for (fi_info* i = list.get(); i != nullptr; i = i->next) items.push_back(i);
  return items;
}

inline std::string Provider(const fi_info* info) {
  return info->fabric_attr->prov_name;
}

inline const sockaddr_in* In4(const void* addr) {
  return static_cast<const sockaddr_in*>(addr);
}

}  // namespace getinfo_testing

#endif  // FABRIC_API_ENTRY_GETINFO_TESTING_H_

// File: fabric/api/core/info.h
//
// Ownership helpers for `struct fi_info` lists inside the library. The C entry
// points fi_dupinfo / fi_freeinfo (info.cc) are the only code that allocates or
// frees the pieces of an fi_info; everything else goes through these helpers.
//
//   fabric::InfoPtr info = fabric::AllocInfo();       // zeroed, all attrs present
//   info->caps = FI_MSG;
//   fabric::InfoList list;
//   list.Append(std::move(info));
//   struct fi_info* for_the_app = list.Release();    // freed by fi_freeinfo
#ifndef FABRIC_API_CORE_INFO_H_
#define FABRIC_API_CORE_INFO_H_

#include <rdma/fabric.h>

#include <memory>

#include "absl/strings/string_view.h"

namespace fabric {

// Frees a single fi_info (not the rest of its list).
struct InfoDeleter {
  void operator()(fi_info* info) const;
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// A zeroed fi_info with all five attribute structures allocated, or null when
// out of memory.
InfoPtr AllocInfo();

// A deep copy of one fi_info (its `next` is null; `handle` is copied as a
// pointer and not owned), or null when out of memory.
InfoPtr DupInfo(const fi_info& info);

// Replaces *field with a malloc'ed copy of `value` (freeing the old one).
// Returns false when out of memory.
bool SetString(char** field, absl::string_view value);

// Replaces *field / *len with a malloc'ed copy of `len` bytes at `addr`.
bool SetAddress(void** field, size_t* field_len, const void* addr, size_t len);

// A singly linked fi_info list that owns its elements until Release().
class InfoList {
 public:
  InfoList() = default;
  InfoList(InfoList&& other) noexcept;
  InfoList& operator=(InfoList&& other) noexcept;
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;
  ~InfoList();

  void Append(InfoPtr info);
  void Append(InfoList other);
  bool empty() const { return head_ == nullptr; }
  size_t size() const;
  fi_info* head() const { return head_; }
  // Hands the list to the caller, who frees it with fi_freeinfo.
  fi_info* Release();

 private:
  fi_info* head_ = nullptr;
  fi_info* tail_ = nullptr;
};

}  // namespace fabric

#endif  // FABRIC_API_CORE_INFO_H_

// fi_dupinfo / fi_freeinfo (fi_allocinfo is the header's fi_dupinfo(NULL)) and
// the C++ ownership helpers of info.h.
#include "fabric/api/core/info.h"

#include <stdlib.h>
#include <string.h>

#include <utility>

#include "fabric/api/core/export.h"

namespace fabric {
namespace {

template <typename T>
T* DupStruct(const T* src) {
  T* copy = static_cast<T*>(calloc(1, sizeof(T)));
  if (copy != nullptr && src != nullptr) *copy = *src;
  return copy;
}

// Copies `len` bytes of `src` into a new allocation; null src gives null.
bool DupBytes(const void* src, size_t len, void** dst) {
  *dst = nullptr;
  if (src == nullptr || len == 0) return true;
  *dst = malloc(len);
  if (*dst == nullptr) return false;
  memcpy(*dst, src, len);
  return true;
}

bool DupCString(const char* src, char** dst) {
  *dst = nullptr;
  if (src == nullptr) return true;
  *dst = strdup(src);
  return *dst != nullptr;
}

void FreeNic(fid_nic* nic) {
  if (nic != nullptr && nic->fid.ops != nullptr && nic->fid.ops->close) {
    nic->fid.ops->close(&nic->fid);
  }
}

void FreeOne(fi_info* info) {
  if (info == nullptr) return;
  free(info->src_addr);
  free(info->dest_addr);
  free(info->tx_attr);
  free(info->rx_attr);
  if (info->ep_attr != nullptr) free(info->ep_attr->auth_key);
  free(info->ep_attr);
  if (info->domain_attr != nullptr) {
    free(info->domain_attr->name);
    free(info->domain_attr->auth_key);
  }
  free(info->domain_attr);
  if (info->fabric_attr != nullptr) {
    free(info->fabric_attr->name);
    free(info->fabric_attr->prov_name);
  }
  free(info->fabric_attr);
  FreeNic(info->nic);
  free(info);
}

// Fills `copy` (a shallow copy of `src` with owned pointers cleared) with deep
// copies. On failure the partially built copy is still safe to FreeOne.
bool DeepCopy(const fi_info& src, fi_info* copy) {
  if (!DupBytes(src.src_addr, src.src_addrlen, &copy->src_addr)) return false;
  if (!DupBytes(src.dest_addr, src.dest_addrlen, &copy->dest_addr)) {
    return false;
  }
  copy->tx_attr = DupStruct(src.tx_attr);
  copy->rx_attr = DupStruct(src.rx_attr);
  copy->ep_attr = DupStruct(src.ep_attr);
  copy->domain_attr = DupStruct(src.domain_attr);
  copy->fabric_attr = DupStruct(src.fabric_attr);
  if (!copy->tx_attr || !copy->rx_attr || !copy->ep_attr ||
      !copy->domain_attr || !copy->fabric_attr) {
    return false;
  }
  // The struct copies above share the source's pointers; own them now.
  copy->ep_attr->auth_key = nullptr;
  copy->domain_attr->name = nullptr;
  copy->domain_attr->auth_key = nullptr;
  copy->fabric_attr->name = nullptr;
  copy->fabric_attr->prov_name = nullptr;
  if (src.ep_attr != nullptr &&
      !DupBytes(src.ep_attr->auth_key, src.ep_attr->auth_key_size,
                reinterpret_cast<void**>(&copy->ep_attr->auth_key))) {
    return false;
  }
  if (src.domain_attr != nullptr &&
      (!DupCString(src.domain_attr->name, &copy->domain_attr->name) ||
       !DupBytes(src.domain_attr->auth_key, src.domain_attr->auth_key_size,
                 reinterpret_cast<void**>(&copy->domain_attr->auth_key)))) {
    return false;
  }
  if (src.fabric_attr != nullptr &&
      (!DupCString(src.fabric_attr->name, &copy->fabric_attr->name) ||
       !DupCString(src.fabric_attr->prov_name,
                   &copy->fabric_attr->prov_name))) {
    return false;
  }
  if (src.nic != nullptr) {
    // A nic duplicates itself (FI_DUP), as libfabric's nic objects do.
    fid_nic* nic = src.nic;
    if (nic->fid.ops == nullptr || nic->fid.ops->control == nullptr ||
        nic->fid.ops->control(&nic->fid, FI_DUP, &copy->nic) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

void InfoDeleter::operator()(fi_info* info) const { FreeOne(info); }

InfoPtr AllocInfo() {
  InfoPtr info(static_cast<fi_info*>(calloc(1, sizeof(fi_info))));
  if (info == nullptr) return nullptr;
  info->tx_attr = DupStruct<fi_tx_attr>(nullptr);
  info->rx_attr = DupStruct<fi_rx_attr>(nullptr);
  info->ep_attr = DupStruct<fi_ep_attr>(nullptr);
  info->domain_attr = DupStruct<fi_domain_attr>(nullptr);
  info->fabric_attr = DupStruct<fi_fabric_attr>(nullptr);
  if (!info->tx_attr || !info->rx_attr || !info->ep_attr ||
      !info->domain_attr || !info->fabric_attr) {
    return nullptr;
  }
  return info;
}

InfoPtr DupInfo(const fi_info& info) {
  InfoPtr copy(static_cast<fi_info*>(calloc(1, sizeof(fi_info))));
  if (copy == nullptr) return nullptr;
  copy->caps = info.caps;
  copy->mode = info.mode;
  copy->addr_format = info.addr_format;
  copy->src_addrlen = info.src_addr ? info.src_addrlen : 0;
  copy->dest_addrlen = info.dest_addr ? info.dest_addrlen : 0;
  copy->handle = info.handle;
  if (!DeepCopy(info, copy.get())) return nullptr;
  return copy;
}

bool SetString(char** field, absl::string_view value) {
  char* copy = static_cast<char*>(malloc(value.size() + 1));
  if (copy == nullptr) return false;
  memcpy(copy, value.data(), value.size());
  copy[value.size()] = '\0';
  free(*field);
  *field = copy;
  return true;
}

bool SetAddress(void** field, size_t* field_len, const void* addr,
                size_t len) {
  void* copy = nullptr;
  if (!DupBytes(addr, len, &copy)) return false;
  free(*field);
  *field = copy;
  *field_len = copy ? len : 0;
  return true;
}

InfoList::InfoList(InfoList&& other) noexcept
    : head_(std::exchange(other.head_, nullptr)),
      tail_(std::exchange(other.tail_, nullptr)) {}

InfoList& InfoList::operator=(InfoList&& other) noexcept {
  if (this != &other) {
    fi_freeinfo(head_);
    head_ = std::exchange(other.head_, nullptr);
    tail_ = std::exchange(other.tail_, nullptr);
  }
  return *this;
}

InfoList::~InfoList() { fi_freeinfo(head_); }

void InfoList::Append(InfoPtr info) {
  if (info == nullptr) return;
  fi_info* node = info.release();
  node->next = nullptr;
  if (tail_ == nullptr) {
    head_ = node;
  } else {
    tail_->next = node;
  }
  tail_ = node;
}

void InfoList::Append(InfoList other) {
  while (other.head_ != nullptr) {
    fi_info* node = other.head_;
    other.head_ = node->next;
    Append(InfoPtr(node));
  }
  other.tail_ = nullptr;
}

size_t InfoList::size() const {
  size_t n = 0;
  for (fi_info* i = head_; i != nullptr; i = i->next) ++n;
  return n;
}

fi_info* InfoList::Release() {
  tail_ = nullptr;
  return std::exchange(head_, nullptr);
}

}  // namespace fabric

extern "C" {

FABRIC_EXPORT struct fi_info* fi_dupinfo(const struct fi_info* info) {
  fabric::InfoPtr copy =
      info == nullptr ? fabric::AllocInfo() : fabric::DupInfo(*info);
  return copy.release();
}

FABRIC_EXPORT void fi_freeinfo(struct fi_info* info) {
  while (info != nullptr) {
    fi_info* next = info->next;
    fabric::InfoDeleter()(info);
    info = next;
  }
}

}  // extern "C"

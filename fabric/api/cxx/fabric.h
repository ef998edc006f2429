// File: fabric/api/cxx/fabric.h
//
// A small C++ layer over the libfabric C API: results as absl::StatusOr, and
// owning types that release what they hold (fi_freeinfo, fi_close) when they
// go out of scope. It uses only the public C API, so it works the same over
// any provider. The objects opened under a fabric have their own headers:
// domain.h, eq.h, cq.h, cntr.h, mr.h, av.h and endpoint.h.
//
// Example: open the fabric of the first tcp RDM endpoint on this machine.
//
//   ofi::Info hints = ofi::AllocInfo();
//   hints->ep_attr->type = FI_EP_RDM;
//   hints->caps = FI_MSG;
//   hints->fabric_attr->prov_name = strdup("tcp");
//
//   absl::StatusOr<ofi::Info> info = ofi::GetInfo(hints.get());
//   if (!info.ok()) return info.status();   // e.g. NOT_FOUND: -FI_ENODATA
//   for (const fi_info& entry : ofi::Entries(*info)) { ... }
//
//   absl::StatusOr<ofi::Fabric> fabric =
//       ofi::OpenFabric(*(*info)->fabric_attr);
//   if (!fabric.ok()) return fabric.status();
//   // fi_close(&fabric->get()->fid) runs when `fabric` is destroyed.
#ifndef FABRIC_API_CXX_FABRIC_H_
#define FABRIC_API_CXX_FABRIC_H_

#include <rdma/fabric.h>

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ofi {

// The status for a negative fi_errno returned by `call` (OK for rc >= 0). The
// message names the call and the error text; the exact fi_errno is kept for
// code that needs it (FiErrno below).
absl::Status ErrorStatus(int rc, const char* call);

// The fi_errno (positive) of a status made by ErrorStatus; other statuses map
// by their code (0 for OK).
int FiErrno(const absl::Status& status);

struct InfoDeleter {
  void operator()(fi_info* info) const { fi_freeinfo(info); }
};
// An fi_info list owned by the caller.
using Info = std::unique_ptr<fi_info, InfoDeleter>;

// A zeroed fi_info with all attribute structures, for hints.
Info AllocInfo();

// A deep copy of one entry.
Info DupInfo(const fi_info& info);

// Options of an fi_getinfo call beyond the hints.
struct GetInfoOptions {
  uint32_t version = FI_VERSION(1, 18);
  const char* node = nullptr;
  const char* service = nullptr;
  uint64_t flags = 0;
};

// fi_getinfo: the matching entries, best first. -FI_ENODATA is NOT_FOUND.
absl::StatusOr<Info> GetInfo(const fi_info* hints,
                             const GetInfoOptions& options = {});

// Iterates the entries of an fi_info list: for (const fi_info& e : Entries(l)).
class Entries {
 public:
  class Iterator {
   public:
    explicit Iterator(fi_info* info) : info_(info) {}
    fi_info& operator*() const { return *info_; }
    Iterator& operator++() {
      info_ = info_->next;
      return *this;
    }
    bool operator!=(const Iterator& other) const {
      return info_ != other.info_;
    }

   private:
    fi_info* info_;
  };
  explicit Entries(const Info& list) : head_(list.get()) {}
  Iterator begin() const { return Iterator(head_); }
  Iterator end() const { return Iterator(nullptr); }

 private:
  fi_info* head_;
};

// An owning handle to any fabric object (struct fid_* starting with a fid):
// fi_close runs on destruction. Close() reports the close status instead.
// Handles are move-only; calls through one need it to be open.
//
// Objects must be closed children first: a Domain before its Fabric, a Cq
// or Mr before its Domain. fi_close of a parent with children open fails
// with -FI_EBUSY; Close() returns that status (FiErrno FI_EBUSY) and keeps
// the object, while the destructor cannot report it and leaves the object
// open. Declaring parents before children gets the order right:
//
//   ofi::Fabric fabric = ...;   // destroyed last
//   ofi::Domain domain = ...;   // destroyed first
template <typename T>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T* object) : object_(object) {}
  Handle(Handle&& other) noexcept
      : object_(std::exchange(other.object_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      Close().IgnoreError();
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Close().IgnoreError(); }

  T* get() const { return object_; }
  T* operator->() const { return object_; }
  explicit operator bool() const { return object_ != nullptr; }
  T* release() { return std::exchange(object_, nullptr); }

  // Closes now. On failure (e.g. -FI_EBUSY while children are open) the
  // handle keeps the object so a later Close can succeed.
  absl::Status Close() {
    if (object_ == nullptr) return absl::OkStatus();
    int rc = fi_close(&object_->fid);
    if (rc != 0) return ErrorStatus(rc, "fi_close");
    object_ = nullptr;
    return absl::OkStatus();
  }

 private:
  T* object_ = nullptr;
};

using Fabric = Handle<fid_fabric>;

// fi_fabric for attributes returned by GetInfo.
absl::StatusOr<Fabric> OpenFabric(const fi_fabric_attr& attr,
                                  void* context = nullptr);

}  // namespace ofi

#endif  // FABRIC_API_CXX_FABRIC_H_

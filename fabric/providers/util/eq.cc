#include "fabric/providers/util/eq.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "fabric/api/core/status.h"
#include "fabric/providers/util/error_entry.h"
#include "fabric/providers/util/fid_ops.h"
#include "fabric/providers/util/peer_eq.h"
#include "fabric/providers/util/wait_object.h"
#include "fabric/providers/util/wait_set.h"

namespace fabric {
namespace {

constexpr size_t kDefaultEqSize = 1024;
constexpr uint64_t kEqOpenFlags = FI_WRITE | FI_AFFINITY | FI_PEER;

UtilEq* ToUtilEq(fid_eq* eq) { return FidCast<UtilEq>(eq); }

const fi_provider* Log(const UtilEq& eq) {
  return eq.fabric->provider->c_provider();
}

ssize_t Fail(const UtilEq& eq, int fi_errno, const char* what) {
  FI_WARN(Log(eq), FI_LOG_EQ, "%s\n", what);
  return -fi_errno;
}

int CloseEq(fid* object) {
  UtilEq* eq = FidCast<UtilEq>(object);
  if (eq->open_children.load() > 0) {
    FI_WARN(Log(*eq), FI_LOG_EQ, "EQ still bound to %d objects\n",
            eq->open_children.load());
    return -FI_EBUSY;
  }
  {
    MutexLock lock(eq->wait->mutex());
    for (EqEntry& entry : eq->entries) {
      // Connection requests own an fi_info the application never read.
      if (!entry.is_error && entry.event == FI_CONNREQ &&
          entry.data.size() >= sizeof(fi_eq_cm_entry)) {
        fi_freeinfo(reinterpret_cast<fi_eq_cm_entry*>(entry.data.data())->info);
      }
    }
  }
  eq->fabric->open_children.fetch_sub(1);
  delete eq;
  return 0;
}

int ControlEq(fid* object, int command, void* arg) {
  return FidCast<UtilEq>(object)->wait->Control(command, arg);
}

// Takes (or with FI_PEEK, copies) the head entry; the queue is not empty.
ssize_t ReadHead(UtilEq& eq, uint32_t* event, void* buf, size_t len,
                 uint64_t flags)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(eq.wait->mutex()) {
  EqEntry& head = eq.entries.front();
  if (head.is_error) return -FI_EAVAIL;
  if (len < head.data.size()) {
    return Fail(eq, FI_ETOOSMALL, "fi_eq_read: buffer smaller than the entry");
  }
  *event = head.event;
  memcpy(buf, head.data.data(), head.data.size());
  ssize_t size = static_cast<ssize_t>(head.data.size());
  if ((flags & FI_PEEK) == 0) {
    eq.entries.pop_front();
    if (eq.entries.empty()) eq.wait->Clear();
  }
  return size;
}

ssize_t CheckReadArguments(const UtilEq& eq, const uint32_t* event,
                           const void* buf, uint64_t flags) {
  if (event == nullptr || buf == nullptr) {
    return Fail(eq, FI_EINVAL, "fi_eq_read: event and buf must not be NULL");
  }
  if ((flags & ~FI_PEEK) != 0) {
    return Fail(eq, FI_EBADFLAGS, "fi_eq_read: only FI_PEEK is a valid flag");
  }
  return 0;
}

ssize_t ReadEq(fid_eq* eq_fid, uint32_t* event, void* buf, size_t len,
               uint64_t flags) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (ssize_t rc = CheckReadArguments(eq, event, buf, flags); rc != 0) {
    return rc;
  }
  eq.wait->Progress();
  MutexLock lock(eq.wait->mutex());
  if (eq.entries.empty()) return -FI_EAGAIN;
  return ReadHead(eq, event, buf, len, flags);
}

ssize_t SreadEq(fid_eq* eq_fid, uint32_t* event, void* buf, size_t len,
                int timeout, uint64_t flags) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (ssize_t rc = CheckReadArguments(eq, event, buf, flags); rc != 0) {
    return rc;
  }
  if (!eq.wait->can_block()) {
    return Fail(eq, FI_EINVAL,
                "fi_eq_sread on an EQ opened with FI_WAIT_NONE");
  }
  CondLock lock(eq.wait->mutex());
  if (!eq.wait->Wait(lock, timeout,
                     [&eq]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(eq.wait->mutex()) {
                       return !eq.entries.empty();
                     })) {
    return -FI_EAGAIN;
  }
  return ReadHead(eq, event, buf, len, flags);
}

ssize_t ReadErrEq(fid_eq* eq_fid, fi_eq_err_entry* buf, uint64_t flags) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (buf == nullptr) return Fail(eq, FI_EINVAL, "fi_eq_readerr: buf is NULL");
  if ((flags & ~FI_PEEK) != 0) {
    return Fail(eq, FI_EBADFLAGS, "fi_eq_readerr: only FI_PEEK is valid");
  }
  MutexLock lock(eq.wait->mutex());
  if (eq.entries.empty() || !eq.entries.front().is_error) return -FI_EAGAIN;
  EqEntry& head = eq.entries.front();
  DeliverErrorEntry(eq.fabric->fabric_fid.api_version, head.error, head.data,
                    &eq.last_err_data, buf);
  if ((flags & FI_PEEK) == 0) {
    eq.entries.pop_front();
    if (eq.entries.empty()) eq.wait->Clear();
  }
  return sizeof(fi_eq_err_entry);
}

ssize_t Push(UtilEq& eq, EqEntry entry) {
  MutexLock lock(eq.wait->mutex());
  if (eq.entries.size() >= eq.capacity) return -FI_EAGAIN;
  eq.entries.push_back(std::move(entry));
  eq.wait->Signal();
  return 0;
}

ssize_t WriteEq(fid_eq* eq_fid, uint32_t event, const void* buf, size_t len,
                uint64_t flags) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (!eq.writable) {
    return Fail(eq, FI_EINVAL, "fi_eq_write: EQ not opened with FI_WRITE");
  }
  if (flags == kEqWriteError) {
    if (buf == nullptr || len != sizeof(fi_eq_err_entry)) {
      return Fail(eq, FI_EINVAL,
                  "fi_eq_write: an error needs a struct fi_eq_err_entry");
    }
    ssize_t rc = EqPostError(eq_fid, *static_cast<const fi_eq_err_entry*>(buf));
    return rc < 0 ? rc : static_cast<ssize_t>(len);
  }
  if (flags != 0) return Fail(eq, FI_EBADFLAGS, "fi_eq_write: unknown flags");
  return EqPost(eq_fid, event, buf, len);
}

const char* StrerrorEq(fid_eq*, int prov_errno, const void*, char* buf,
                       size_t len) {
  return ErrorText(prov_errno, buf, len);
}

fi_ops kEqFidOps = MakeFidOps({.close = CloseEq, .control = ControlEq});

fi_ops_eq kEqOps = {
    .size = sizeof(fi_ops_eq),
    .read = ReadEq,
    .readerr = ReadErrEq,
    .write = WriteEq,
    .sread = SreadEq,
    .strerror = StrerrorEq,
};

}  // namespace

int OpenUtilEq(fid_fabric* fabric_fid, fi_eq_attr* attr, fid_eq** eq_out,
               void* context) {
  UtilFabric* fabric = ToUtilFabric(fabric_fid);
  const fi_provider* log = fabric->provider->c_provider();
  if (attr == nullptr || eq_out == nullptr) {
    FI_WARN(log, FI_LOG_EQ, "fi_eq_open: attr and eq must not be NULL\n");
    return -FI_EINVAL;
  }
  if ((attr->flags & ~kEqOpenFlags) != 0) {
    FI_WARN(log, FI_LOG_EQ, "fi_eq_open: unknown flags 0x%llx\n",
            static_cast<unsigned long long>(attr->flags & ~kEqOpenFlags));
    return -FI_EBADFLAGS;
  }
  int wait_kind;
  memcpy(&wait_kind, &attr->wait_obj, sizeof(wait_kind));
  absl::StatusOr<std::unique_ptr<WaitObject>> wait = CreateWaitObject(
      wait_kind, attr->wait_set, *fabric, fabric->progress.get());
  if (!wait.ok()) {
    FI_WARN(log, FI_LOG_EQ, "fi_eq_open: %s\n",
            std::string(wait.status().message()).c_str());
    return ToFiErrno(wait.status());
  }
  absl::StatusOr<fid_eq*> owner = (attr->flags & FI_PEER)
                                      ? ImportedPeerEq(context)
                                      : absl::StatusOr<fid_eq*>(nullptr);
  if (!owner.ok()) {
    FI_WARN(log, FI_LOG_EQ, "%s\n",
            std::string(owner.status().message()).c_str());
    return ToFiErrno(owner.status());
  }
  UtilEq* eq = new UtilEq;
  eq->eq_fid = {};
  InitFid(&eq->eq_fid.fid, FI_CLASS_EQ, context, &kEqFidOps);
  eq->eq_fid.ops = *owner != nullptr ? &kPeerEqOps : &kEqOps;
  eq->owner = *owner;
  eq->fabric = fabric;
  eq->capacity = attr->size != 0 ? attr->size : kDefaultEqSize;
  eq->writable = (attr->flags & FI_WRITE) != 0;
  eq->wait = *std::move(wait);
  fabric->open_children.fetch_add(1);
  *eq_out = &eq->eq_fid;
  return 0;
}

ssize_t EqPost(fid_eq* eq_fid, uint32_t event, const void* buf, size_t len) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (eq.owner != nullptr) return ForwardEvent(eq.owner, event, buf, len);
  if (buf == nullptr || len == 0) {
    return Fail(eq, FI_EINVAL, "EQ event without data");
  }
  EqEntry entry;
  entry.event = event;
  entry.data.assign(static_cast<const char*>(buf),
                    static_cast<const char*>(buf) + len);
  ssize_t rc = Push(eq, std::move(entry));
  return rc != 0 ? rc : static_cast<ssize_t>(len);
}

ssize_t EqPostError(fid_eq* eq_fid, const fi_eq_err_entry& error) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  if (eq.owner != nullptr) return ForwardError(eq.owner, error);
  EqEntry entry;
  entry.is_error = true;
  entry.error = error;
  if (error.err_data != nullptr && error.err_data_size > 0) {
    const char* data = static_cast<const char*>(error.err_data);
    entry.data.assign(data, data + error.err_data_size);
  }
  entry.error.err_data = nullptr;
  entry.error.err_data_size = 0;
  return Push(eq, std::move(entry));
}

UtilEq* AsUtilEq(fid* object) {
  if (object == nullptr || object->fclass != FI_CLASS_EQ ||
      object->ops != &kEqFidOps) {
    return nullptr;
  }
  return FidCast<UtilEq>(object);
}

ssize_t EqReadWithoutProgress(fid_eq* eq_fid, uint32_t* event, void* buf,
                              size_t len) {
  UtilEq& eq = *ToUtilEq(eq_fid);
  MutexLock lock(eq.wait->mutex());
  if (eq.entries.empty()) return -FI_EAGAIN;
  return ReadHead(eq, event, buf, len, 0);
}

int EqTryWait(fid* object) {
  UtilEq* eq = AsUtilEq(object);
  if (eq == nullptr) return -FI_EINVAL;
  eq->wait->Progress();
  MutexLock lock(eq->wait->mutex());
  return eq->entries.empty() ? 0 : -FI_EAGAIN;
}

}  // namespace fabric

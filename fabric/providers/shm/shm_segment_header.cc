#include "fabric/providers/shm/shm_segment_header.h"

#include <rdma/fi_errno.h>

#include <new>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace shm {
namespace {

// One load that the compiler may not repeat: another process can change the
// field between two reads, and validation must hold for the value used.
template <typename T>
T ReadOnce(const T& field) {
  return *static_cast<const volatile T*>(&field);
}

}  // namespace

void WriteSegmentHeader(void* base, const SegmentInfo& info) {
  auto* header = new (base) SegmentHeader{};
  header->magic = kSegmentMagic;
  header->version = kSegmentVersion;
  header->creator_pid = info.pid;
  header->size = info.size;
  header->creator_start_time = info.start_time;
  header->creator_pid_ns = info.pid_ns;
  header->ready.store(1, std::memory_order_release);
}

absl::StatusOr<SegmentInfo> CheckSegmentHeader(const void* base,
                                               uint64_t file_size) {
  if (file_size < kSegmentPayloadOffset) {
    return FiError(FI_EINVAL,
                   absl::StrCat("segment of ", file_size,
                                " bytes is smaller than its header"));
  }
  const auto* header = static_cast<const SegmentHeader*>(base);
  // `ready` first, with acquire: the other fields are only meaningful after.
  uint32_t ready = header->ready.load(std::memory_order_acquire);
  if (ready == 0) return FiError(FI_EAGAIN, "segment header not ready yet");
  uint64_t magic = ReadOnce(header->magic);
  uint32_t version = ReadOnce(header->version);
  int32_t pid = ReadOnce(header->creator_pid);
  uint64_t size = ReadOnce(header->size);
  uint64_t start_time = ReadOnce(header->creator_start_time);
  uint64_t pid_ns = ReadOnce(header->creator_pid_ns);
  if (ready != 1 || magic != kSegmentMagic) {
    return FiError(FI_EINVAL, "not an shm segment (bad magic or ready flag)");
  }
  if (version != kSegmentVersion) {
    return FiError(FI_EOPNOTSUPP,
                   absl::StrCat("segment layout version ", version,
                                ", this library reads ", kSegmentVersion));
  }
  if (size < kSegmentPayloadOffset || size > file_size) {
    return FiError(FI_EINVAL, absl::StrCat("segment header says ", size,
                                           " bytes, file has ", file_size));
  }
  if (pid <= 0) {
    return FiError(FI_EINVAL, absl::StrCat("segment creator pid ", pid));
  }
  return SegmentInfo{pid, start_time, pid_ns, size};
}

}  // namespace shm
}  // namespace fabric

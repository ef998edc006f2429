#include "fabric/providers/tcp/tcp_wire.h"

#include <rdma/fi_errno.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace tcp {
namespace {

constexpr uint8_t kKnownFlags = kRemoteData | kAckRequested;

bool IsRma(Op op) { return op == Op::kWrite || op == Op::kReadRequest; }

}  // namespace

absl::Status CheckHeader(const Header& header) {
  if (header.op < static_cast<uint8_t>(Op::kMsg) ||
      header.op > static_cast<uint8_t>(Op::kAck)) {
    return FiError(FI_EIO, absl::StrCat("unknown opcode ", header.op));
  }
  Op op = static_cast<Op>(header.op);
  if ((header.flags & ~kKnownFlags) != 0) {
    return FiError(FI_EIO, absl::StrCat("unknown header flags 0x",
                                           absl::Hex(header.flags)));
  }
  if (IsRma(op) ? (header.rma_count == 0 || header.rma_count > kMaxRmaCount)
                : header.rma_count != 0) {
    return FiError(FI_EIO, absl::StrCat("opcode ", header.op, " with ",
                                           header.rma_count,
                                           " RMA descriptors"));
  }
  if ((op == Op::kReadRequest || op == Op::kAck) && header.size != 0) {
    return FiError(FI_EIO, absl::StrCat("opcode ", header.op,
                                           " with a payload of ", header.size));
  }
  if (header.status > 0 ||
      (header.status != 0 && op != Op::kAck && op != Op::kReadResponse)) {
    return FiError(FI_EIO, absl::StrCat("opcode ", header.op,
                                           " with status ", header.status));
  }
  return absl::OkStatus();
}

absl::Status CheckRmaDescriptors(const Header& header,
                                 const RmaDescriptor* descriptors) {
  uint64_t total = 0;
  for (uint16_t i = 0; i < header.rma_count; ++i) {
    if (descriptors[i].len > UINT64_MAX - total) {
      return FiError(FI_EIO, "RMA descriptor lengths overflow");
    }
    total += descriptors[i].len;
  }
  if (static_cast<Op>(header.op) == Op::kWrite && total != header.size) {
    return FiError(FI_EIO,
                   absl::StrCat("RMA write of ", header.size,
                                " bytes for descriptors of ", total));
  }
  return absl::OkStatus();
}

}  // namespace tcp
}  // namespace fabric

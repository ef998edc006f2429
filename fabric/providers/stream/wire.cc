#include "fabric/providers/stream/wire.h"

#include <rdma/fi_errno.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace stream {
namespace {

constexpr uint8_t kKnownFlags =
    kRemoteData | kAckRequested | kPayloadInSender | kAssistsReadData;

// The opcodes whose descriptors name memory (1..kMaxRmaCount of them).
bool IsRma(Op op) {
  return op == Op::kWrite || op == Op::kReadRequest || op == Op::kAtomic ||
         op == Op::kAssist;
}

absl::Status CheckAtomic(const Header& header, uint64_t total) {
  if ((header.tag >> 24) != 0 ||
      ((header.tag >> 16) & 0xff) > static_cast<uint8_t>(AtomicKind::kCompare)) {
    return FiError(FI_EIO, absl::StrCat("atomic code 0x",
                                           absl::Hex(header.tag)));
  }
  AtomicCode code = UnpackAtomic(header.tag);
  size_t element = AtomicDatatypeSize(code.datatype);
  if (total == 0 || total > kMaxAtomicBytes ||
      (element != 0 && total % element != 0)) {
    return FiError(FI_EIO, absl::StrCat("atomic on ", total, " bytes"));
  }
  uint64_t operands = code.kind == AtomicKind::kCompare ? 2 * total
                      : code.op == FI_ATOMIC_READ         ? 0
                                                          : total;
  if (header.size != operands) {
    return FiError(FI_EIO, absl::StrCat("atomic with ", header.size,
                                           " bytes of operands for ", total,
                                           " target bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t PackAtomic(const AtomicCode& code) {
  return static_cast<uint64_t>(code.datatype & 0xff) |
         static_cast<uint64_t>(code.op & 0xff) << 8 |
         static_cast<uint64_t>(code.kind) << 16;
}

AtomicCode UnpackAtomic(uint64_t tag) {
  return {static_cast<int>(tag & 0xff), static_cast<int>((tag >> 8) & 0xff),
          static_cast<AtomicKind>((tag >> 16) & 0xff)};
}

absl::Status CheckHeader(const Header& header) {
  if (header.op < static_cast<uint8_t>(Op::kMsg) ||
      header.op > static_cast<uint8_t>(Op::kAssist)) {
    return FiError(FI_EIO, absl::StrCat("unknown opcode ", header.op));
  }
  Op op = static_cast<Op>(header.op);
  if ((header.flags & ~kKnownFlags) != 0 ||
      ((header.flags & kAssistsReadData) != 0 &&
       (op != Op::kAssist || header.flags != kAssistsReadData))) {
    return FiError(FI_EIO,
                   absl::StrCat("header flags 0x", absl::Hex(header.flags),
                                " on opcode ", header.op));
  }
  bool in_sender = (header.flags & kPayloadInSender) != 0;
  bool lent_message = (op == Op::kMsg || op == Op::kTagged) &&
                      (header.flags & kAckRequested) != 0;
  // Answered by nobody (its sender may help copy it: kAssistsReadData).
  bool read_data = op == Op::kReadResponse && header.status == 0 &&
                   (header.flags & kAckRequested) == 0;
  // Both lists of a write, neither empty.
  bool write_data =
      op == Op::kWrite && header.tag >= 1 && header.tag < header.rma_count;
  if (in_sender && !lent_message && !read_data && !write_data) {
    return FiError(FI_EIO, absl::StrCat("opcode ", header.op,
                                        " with the payload in the sender"));
  }
  if (IsRma(op) || in_sender
          ? (header.rma_count == 0 || header.rma_count > kMaxRmaCount)
          : header.rma_count != 0) {
    return FiError(FI_EIO, absl::StrCat("opcode ", header.op, " with ",
                                           header.rma_count,
                                           " RMA descriptors"));
  }
  if ((op == Op::kReadRequest || op == Op::kAck || op == Op::kAssist) &&
      header.size != 0) {
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
  // What `count` descriptors from `first` describe (no overflow: a part of
  // `total`).
  auto sum = [](const RmaDescriptor* first, uint16_t count) {
    uint64_t bytes = 0;
    for (uint16_t i = 0; i < count; ++i) bytes += first[i].len;
    return bytes;
  };
  if (static_cast<Op>(header.op) == Op::kAtomic) {
    return CheckAtomic(header, total);
  }
  if (static_cast<Op>(header.op) == Op::kAssist &&
      (header.data == 0 || header.data > total || header.tag == 0)) {
    return FiError(FI_EIO, absl::StrCat("assist of ", header.data,
                                        " bytes for descriptors of ", total,
                                        ", job ", header.tag));
  }
  bool in_sender = (header.flags & kPayloadInSender) != 0;
  uint64_t target = sum(descriptors, TargetDescriptorCount(header));
  if (static_cast<Op>(header.op) == Op::kWrite && target != header.size) {
    return FiError(FI_EIO, absl::StrCat("RMA write of ", header.size,
                                        " bytes for descriptors of ", target));
  }
  uint64_t payload = in_sender ? sum(PayloadDescriptors(header, descriptors),
                                     PayloadDescriptorCount(header))
                               : header.size;
  if (payload != header.size) {
    return FiError(FI_EIO,
                   absl::StrCat("a payload of ", header.size,
                                " bytes in the sender described as ", payload));
  }
  return absl::OkStatus();
}

}  // namespace stream
}  // namespace fabric

// File: fabric/providers/stream/wire.h
//
// What stream endpoints send each other on a connection once it is
// established: a fixed 40-byte header, up to kMaxRmaCount RMA
// descriptors, then `size` payload bytes. Fields are in the sender's byte
// order: tcp's handshake (tcp_cm.h) refuses peers of the other order, and
// shm's peers share a host. Everything received is checked with
// CheckHeader before use.
//
//   op            payload                          answered by
//   kMsg          message (flag kRemoteData: data) kAck when kAckRequested
//   kTagged       message with `tag`               kAck when kAckRequested
//   kWrite        bytes for the descriptors        kAck (always; status)
//   kReadRequest  none; descriptors name the data  kReadResponse (status)
//   kReadResponse the data read for request `id`   -
//                 (or the old values of a fetching kAtomic)
//   kAck          none; `status` of request `id`   -
//   kAtomic       operands, then compare values    kAck (kind kWrite) or
//                 (kind kCompare); descriptors     kReadResponse with the
//                 name the target elements         old values (status)
//   kAssist       none; see below                  -
//
// kAtomic carries its datatype, op and AtomicKind in `tag` (unused by
// every other RMA opcode): PackAtomic / UnpackAtomic.
//
// A kMsg or kTagged with kPayloadInSender (streams whose peers can copy
// each other's memory: shm with cross-memory attach) carries no payload
// bytes: its descriptors (key 0) name where the `size` bytes lie in the
// sender's memory, the target copies them from there (ByteStream::Pull),
// and kAckRequested is set: the sender's buffer is in use until the kAck.
// A kReadResponse (status 0) may carry kPayloadInSender too, without
// kAckRequested: its descriptors name the data read in the target's
// registered memory, and the reader copies it from there. So may a kWrite
// (always answered): its first rma_count - `tag` descriptors name the
// target's memory as usual, its last `tag` the bytes in the writer's.
//
// kAssist (streams with a CopyShare, byte_stream.h) asks the sender of such
// a message or write, `id`, to help copy it: `tag` is the receiver's copy
// job, `data` the bytes to place, and the descriptors name where they go
// in the receiver's memory. Both sides then claim kAssistChunk-byte chunks
// of the job through the CopyShare (connection.h). With kAssistsReadData
// it asks the same of the sender of a read's data: `id` is then the
// asker's read request.
#ifndef FABRIC_PROVIDERS_STREAM_WIRE_H_
#define FABRIC_PROVIDERS_STREAM_WIRE_H_

#include <stdint.h>

#include "absl/status/status.h"
#include "fabric/providers/stream/atomic_ops.h"

namespace fabric {
namespace stream {

enum class Op : uint8_t {
  kMsg = 1,
  kTagged = 2,
  kWrite = 3,
  kReadRequest = 4,
  kReadResponse = 5,
  kAck = 6,
  kAtomic = 7,
  kAssist = 8,
};

// The chunks a kAssist job is split into. Large, because each copy call
// pins its pages first: 1 MiB shm ping-pong bandwidth with 16, 64, 128,
// 256 and 512 KiB chunks: 14.9, 24.5, 26.0, 31.6-34.3 and 36.7 GB/s (one
// copier: 20.6).
inline constexpr uint64_t kAssistChunk = 512 * 1024;

enum HeaderFlag : uint8_t {
  kRemoteData = 1,       // `data` is remote CQ data for the target's CQ
  kAckRequested = 2,     // answer with kAck once the data is placed
  kPayloadInSender = 4,  // the descriptors name the payload (see above)
  // kAssist only: the bytes are the data of the kReadResponse to the
  // asker's own request `id`, not a message or write of the helper's.
  kAssistsReadData = 8,
};

struct Header {
  uint8_t op;
  uint8_t flags;
  uint16_t rma_count;  // RMA descriptors after the header
  int32_t status;      // kAck, kReadResponse: 0 or a negative fi_errno
  uint64_t size;       // payload bytes after the descriptors
  uint64_t tag;
  uint64_t data;
  uint64_t id;  // the initiator's number for a request, echoed in answers
};
static_assert(sizeof(Header) == 40, "the header is part of the wire format");

struct RmaDescriptor {
  uint64_t addr;
  uint64_t len;
  uint64_t key;
};
static_assert(sizeof(RmaDescriptor) == 24, "part of the wire format");

// The most RMA descriptors one request carries (tx_attr->rma_iov_limit).
constexpr uint16_t kMaxRmaCount = 4;

// A kAtomic's `tag`: datatype in bits 0-7, op in 8-15, kind in 16-23.
struct AtomicCode {
  int datatype;
  int op;
  AtomicKind kind;
};
uint64_t PackAtomic(const AtomicCode& code);
AtomicCode UnpackAtomic(uint64_t tag);

// The descriptors of a kPayloadInSender payload, in the sender's memory:
// a kWrite's last `tag`, every other message's all (PayloadDescriptors
// points at the first of them in a header's descriptors).
inline uint16_t PayloadDescriptorCount(const Header& header) {
  return header.op == static_cast<uint8_t>(Op::kWrite)
             ? static_cast<uint16_t>(header.tag)
             : header.rma_count;
}
inline const RmaDescriptor* PayloadDescriptors(
    const Header& header, const RmaDescriptor* descriptors) {
  return descriptors + (header.rma_count - PayloadDescriptorCount(header));
}
// The descriptors that name the target's memory (RMA): the first
// rma_count - `tag` of a kWrite that leaves its payload in the sender,
// else all.
inline uint16_t TargetDescriptorCount(const Header& header) {
  return (header.flags & kPayloadInSender) != 0 &&
                 header.op == static_cast<uint8_t>(Op::kWrite)
             ? static_cast<uint16_t>(header.rma_count - header.tag)
             : header.rma_count;
}

// FI_EIO status saying what is wrong when `header` (just received) is
// not one a peer of ours sends.
absl::Status CheckHeader(const Header& header);

// A header CheckHeader accepts without asking: a message or tagged message
// whose payload follows it, with at most remote CQ data (most headers).
inline bool IsPlainMessage(const Header& header) {
  return (header.op == static_cast<uint8_t>(Op::kMsg) ||
          header.op == static_cast<uint8_t>(Op::kTagged)) &&
         (header.flags & ~kRemoteData) == 0 && header.rma_count == 0 &&
         header.status == 0;
}

// FI_EIO status unless the descriptors of a kWrite or kReadRequest
// describe exactly `size` bytes (kWrite) or any bytes (kReadRequest); of
// a kAtomic, 1..kMaxAtomicBytes bytes, whole elements of a known datatype,
// with the operands its kind and op need (an unsupported datatype or op is
// no protocol error: the target refuses it with FI_EOPNOTSUPP).
absl::Status CheckRmaDescriptors(const Header& header,
                                 const RmaDescriptor* descriptors);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_WIRE_H_

// The checks on what arrives from a peer, for atomic requests above all:
// whatever a peer of ours never sends is FI_EIO (the connection closes),
// while an unsupported datatype or op passes (the target answers it with
// FI_EOPNOTSUPP).
#include "fabric/providers/stream/wire.h"

#include <rdma/fi_errno.h>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace stream {
namespace {

Header AtomicHeader(int datatype, int op, AtomicKind kind, uint64_t size) {
  Header header = {};
  header.op = static_cast<uint8_t>(Op::kAtomic);
  header.rma_count = 2;
  header.size = size;
  header.tag = PackAtomic({datatype, op, kind});
  return header;
}

int Check(const Header& header, const RmaDescriptor* descriptors) {
  absl::Status status = CheckHeader(header);
  if (status.ok()) status = CheckRmaDescriptors(header, descriptors);
  return ToFiErrno(status);
}

TEST(WireTest, AtomicCodesRoundTrip) {
  AtomicCode code =
      UnpackAtomic(PackAtomic({FI_LONG_DOUBLE_COMPLEX, FI_MSWAP,
                               AtomicKind::kCompare}));
  EXPECT_EQ(code.datatype, FI_LONG_DOUBLE_COMPLEX);
  EXPECT_EQ(code.op, FI_MSWAP);
  EXPECT_EQ(code.kind, AtomicKind::kCompare);
}

TEST(WireTest, AtomicRequestsOfEveryKind) {
  RmaDescriptor two[2] = {{0x1000, 8, 1}, {0x2000, 16, 1}};  // 24 bytes
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 24),
                  two), 0);
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_ATOMIC_READ, AtomicKind::kFetch,
                               0), two), 0);
  EXPECT_EQ(Check(AtomicHeader(FI_UINT32, FI_CSWAP, AtomicKind::kCompare, 48),
                  two), 0);
  // Unsupported but well formed: the target refuses it, no protocol error.
  EXPECT_EQ(Check(AtomicHeader(FI_DOUBLE, FI_BOR, AtomicKind::kWrite, 24),
                  two), 0);
  EXPECT_EQ(Check(AtomicHeader(40, FI_SUM, AtomicKind::kWrite, 24), two), 0);
}

TEST(WireTest, MalformedAtomicRequestsAreProtocolErrors) {
  RmaDescriptor two[2] = {{0x1000, 8, 1}, {0x2000, 16, 1}};
  // Operand bytes that do not fit the kind and op.
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 16),
                  two), -FI_EIO);
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_CSWAP, AtomicKind::kCompare, 24),
                  two), -FI_EIO);
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_ATOMIC_READ, AtomicKind::kFetch,
                               24), two), -FI_EIO);
  // Not whole elements.
  EXPECT_EQ(Check(AtomicHeader(FI_LONG_DOUBLE, FI_SUM, AtomicKind::kWrite,
                               24), two), -FI_EIO);
  // Unknown kind, bits past the code.
  Header header = AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 24);
  header.tag |= uint64_t{3} << 16;
  EXPECT_EQ(Check(header, two), -FI_EIO);
  header = AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 24);
  header.tag |= uint64_t{1} << 40;
  EXPECT_EQ(Check(header, two), -FI_EIO);
  // No descriptors, no bytes, too many bytes, a status.
  header = AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 0);
  header.rma_count = 0;
  EXPECT_EQ(Check(header, two), -FI_EIO);
  RmaDescriptor empty[2] = {{0x1000, 0, 1}, {0x2000, 0, 1}};
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 0),
                  empty),
            -FI_EIO);
  RmaDescriptor large[2] = {{0x1000, kMaxAtomicBytes, 1}, {0x2000, 8, 1}};
  EXPECT_EQ(Check(AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite,
                               kMaxAtomicBytes + 8), large),
            -FI_EIO);
  header = AtomicHeader(FI_UINT64, FI_SUM, AtomicKind::kWrite, 24);
  header.status = -FI_EACCES;
  EXPECT_EQ(Check(header, two), -FI_EIO);
}

}  // namespace
// kPayloadInSender: on messages with an ack asked for, and on a read's
// data (no ack), with descriptors that cover exactly the payload.
TEST(WireTest, PayloadsLeftInTheSender) {
  Header header = {};
  header.op = static_cast<uint8_t>(Op::kTagged);
  header.flags = kPayloadInSender | kAckRequested;
  header.rma_count = 2;
  header.size = 300;
  RmaDescriptor where[2] = {{0x1000, 100, 0}, {0x9000, 200, 0}};
  EXPECT_EQ(Check(header, where), 0);
  where[1].len = 199;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // 299 described
  where[1].len = 200;
  header.flags = kPayloadInSender;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // nobody would answer
  header.flags = kPayloadInSender | kAckRequested;
  header.rma_count = 0;
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.rma_count = 2;
  header.op = static_cast<uint8_t>(Op::kWrite);
  EXPECT_EQ(Check(header, where), -FI_EIO);
  // A read's data left in the target: no ack, and only a success carries
  // it.
  header.op = static_cast<uint8_t>(Op::kReadResponse);
  header.flags = kPayloadInSender;
  EXPECT_EQ(Check(header, where), 0);
  where[0].len = 101;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // 301 described
  where[0].len = 100;
  header.flags = kPayloadInSender | kAckRequested;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // nobody would help copy
  header.flags = kPayloadInSender;
  header.status = -FI_EACCES;
  EXPECT_EQ(Check(header, where), -FI_EIO);
}

// An RMA write whose bytes stay in the writer: the target's descriptors,
// then `tag` descriptors of the payload, each list covering the size.
TEST(WireTest, WritesLeftInTheWriter) {
  Header header = {};
  header.op = static_cast<uint8_t>(Op::kWrite);
  header.flags = kPayloadInSender;
  header.rma_count = 3;
  header.tag = 2;
  header.size = 300;
  RmaDescriptor where[3] = {
      {0x5000, 300, 7}, {0x1000, 100, 0}, {0x9000, 200, 0}};
  EXPECT_EQ(Check(header, where), 0);
  where[2].len = 201;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // 301 in the writer
  where[2].len = 200;
  where[0].len = 299;
  EXPECT_EQ(Check(header, where), -FI_EIO);  // 299 at the target
  where[0].len = 300;
  header.tag = 0;  // no payload list
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.tag = 3;  // no target list
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.tag = 1;  // 400 at the target, 200 in the writer
  EXPECT_EQ(Check(header, where), -FI_EIO);
}

// kAssistsReadData belongs to kAssist alone (AssistRequests: with it).
TEST(WireTest, AssistsReadDataOnlyOnAssist) {
  Header header = {};
  header.op = static_cast<uint8_t>(Op::kMsg);
  header.flags = kAssistsReadData;
  EXPECT_EQ(ToFiErrno(CheckHeader(header)), -FI_EIO);
  header.op = static_cast<uint8_t>(Op::kReadResponse);
  header.flags = kAssistsReadData | kPayloadInSender;
  header.rma_count = 1;
  EXPECT_EQ(ToFiErrno(CheckHeader(header)), -FI_EIO);
}

// kAssist: no payload, a job, and descriptors that hold the bytes to place.
TEST(WireTest, AssistRequests) {
  Header header = {};
  header.op = static_cast<uint8_t>(Op::kAssist);
  header.rma_count = 2;
  header.tag = 7;     // job
  header.data = 300;  // bytes
  RmaDescriptor where[2] = {{0x1000, 100, 0}, {0x9000, 200, 0}};
  EXPECT_EQ(Check(header, where), 0);
  header.data = 301;  // more than the descriptors hold
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.data = 0;
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.data = 300;
  header.tag = 0;  // no job
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.tag = 7;
  header.size = 1;  // a payload
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.size = 0;
  header.rma_count = 0;
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.rma_count = 2;
  header.flags = kPayloadInSender | kAckRequested;
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.flags = kAssistsReadData;  // for a read's data
  EXPECT_EQ(Check(header, where), 0);
  header.flags = kAssistsReadData | kRemoteData;
  EXPECT_EQ(Check(header, where), -FI_EIO);
  header.flags = 0;
  header.op = static_cast<uint8_t>(Op::kAssist) + 1;  // unknown
  EXPECT_EQ(Check(header, where), -FI_EIO);
}

}  // namespace stream
}  // namespace fabric

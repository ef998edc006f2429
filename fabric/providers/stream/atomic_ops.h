// File: fabric/providers/stream/atomic_ops.h
//
// The one table of which atomic operations (fi_atomic(3)) stream endpoints
// support on which datatypes, and the arithmetic itself. Both the valid
// queries (fi_atomicvalid & co., fi_query_atomic) and the target of an
// atomic request decide with AtomicSupported, so that what is advertised is
// exactly what is carried out.
//
//   integers (FI_INT8..FI_UINT64, FI_INT128, FI_UINT128)
//                                     every operation
//   FI_FLOAT, FI_DOUBLE, FI_LONG_DOUBLE
//                                     all but the bitwise and logical ones
//                                     (FI_LOR..FI_BXOR, FI_MSWAP)
//   the complex types                 FI_SUM, FI_PROD, FI_ATOMIC_READ,
//                                     FI_ATOMIC_WRITE, FI_CSWAP, FI_CSWAP_NE
#ifndef FABRIC_PROVIDERS_STREAM_ATOMIC_OPS_H_
#define FABRIC_PROVIDERS_STREAM_ATOMIC_OPS_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/providers/util/atomic_path_ops.h"

namespace fabric {
namespace stream {

// AtomicKind (util/atomic_path_ops.h): kWrite takes FI_MIN..FI_BXOR and
// FI_ATOMIC_WRITE, kFetch those and FI_ATOMIC_READ, kCompare
// FI_CSWAP..FI_MSWAP.

// The most bytes of target memory one atomic request covers; the valid
// queries report it as a count of elements.
constexpr size_t kMaxAtomicBytes = 4096;

// Bytes of one element of `datatype`, or 0 for a value that is no
// point-to-point datatype.
size_t AtomicDatatypeSize(int datatype);

// Whether `op` on `datatype` is in the table above and belongs to `kind`.
bool AtomicSupported(int datatype, int op, AtomicKind kind);

// fi_atomicvalid & co.: 0 with *attr filled (the element size, and the
// most elements one request takes), or -FI_EOPNOTSUPP for a combination
// the table does not have, values that are no datatype or op included (as
// libfabric answers).
int QueryAtomicKind(int datatype, int op, AtomicKind kind,
                    fi_atomic_attr* attr);

// fi_query_atomic: `flags` 0, FI_FETCH_ATOMIC or FI_COMPARE_ATOMIC picks the
// kind (-FI_EBADFLAGS for anything else); -FI_EINVAL for a null attr.
int QueryAtomic(int datatype, int op, fi_atomic_attr* attr, uint64_t flags);

// Applies `op` to the `count` elements of `datatype` at `target`, with
// `operand` (buf[i]; unused by FI_ATOMIC_READ) and `compare` (compare[i];
// compare kinds only), and copies the values before the operation to `old`
// (may be null). Buffers need no alignment. The combination must be
// supported.
void ApplyAtomic(int datatype, int op, size_t count, void* target,
                 const void* operand, const void* compare, void* old);

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_ATOMIC_OPS_H_

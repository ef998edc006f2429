#include "fabric/providers/stream/atomic_ops.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include <complex>
#include <type_traits>

namespace fabric {
namespace stream {
namespace {

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// The 128-bit integers are integers, though strict C++17's
// std::is_integral says otherwise for them.
using Int128 = __int128;
using Uint128 = unsigned __int128;
template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> ||
                            std::is_same_v<T, Int128> ||
                            std::is_same_v<T, Uint128>;

// What integer sums and products are computed in: unsigned (no signed
// overflow) and at least 64 bits wide (no promotion to int for the narrow
// ones, whose products could overflow an int).
template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) > 8), Uint128, uint64_t>;

bool IsBitwise(int op) {
  return (op >= FI_LOR && op <= FI_BXOR) || op == FI_MSWAP;
}
bool IsOrdered(int op) {
  return op == FI_MIN || op == FI_MAX || (op >= FI_CSWAP_LE && op <= FI_CSWAP_GT);
}

bool InKind(int op, AtomicKind kind) {
  switch (kind) {
    case AtomicKind::kWrite:
      return (op >= FI_MIN && op <= FI_BXOR) || op == FI_ATOMIC_WRITE;
    case AtomicKind::kFetch:
      return op >= FI_MIN && op <= FI_ATOMIC_WRITE;
    case AtomicKind::kCompare:
      return op >= FI_CSWAP && op <= FI_MSWAP;
  }
  return false;
}

// The new value of an element: `a` at the target, `b` the operand, `c` the
// compare value (fi_atomic(3) calls them addr[i], buf[i], compare[i]).
template <typename T>
T Combine(int op, T a, T b, T c) {
  if constexpr (kIsInteger<T>) {
    using W = WideUnsigned<T>;
    // Integer sums and products wrap around at the type's width.
    switch (op) {
      case FI_SUM:
        return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
      case FI_PROD:
        return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
      case FI_LOR: return static_cast<T>(a != 0 || b != 0);
      case FI_LAND: return static_cast<T>(a != 0 && b != 0);
      case FI_LXOR: return static_cast<T>((a != 0) != (b != 0));
      case FI_BOR: return static_cast<T>(a | b);
      case FI_BAND: return static_cast<T>(a & b);
      case FI_BXOR: return static_cast<T>(a ^ b);
      case FI_MSWAP: return static_cast<T>((b & c) | (a & ~c));
    }
  }
  if constexpr (!kIsInteger<T>) {
    switch (op) {
      case FI_SUM: return a + b;
      case FI_PROD: return a * b;
    }
  }
  if constexpr (!IsComplex<T>::value) {
    switch (op) {
      case FI_MIN: return b < a ? b : a;
      case FI_MAX: return b > a ? b : a;
      case FI_CSWAP_LE: return c <= a ? b : a;
      case FI_CSWAP_LT: return c < a ? b : a;
      case FI_CSWAP_GE: return c >= a ? b : a;
      case FI_CSWAP_GT: return c > a ? b : a;
    }
  }
  switch (op) {
    case FI_ATOMIC_WRITE: return b;
    case FI_CSWAP: return c == a ? b : a;
    case FI_CSWAP_NE: return c != a ? b : a;
  }
  return a;  // FI_ATOMIC_READ
}

template <typename T>
T Load(const char* p, size_t i) {
  T value;
  memcpy(&value, p + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void Apply(int op, size_t count, char* target, const char* operand,
           const char* compare, char* old) {
  if (old != nullptr) memcpy(old, target, count * sizeof(T));
  if (op == FI_ATOMIC_READ) return;
  for (size_t i = 0; i < count; ++i) {
    T value = Combine<T>(op, Load<T>(target, i), Load<T>(operand, i),
                         compare != nullptr ? Load<T>(compare, i) : T());
    memcpy(target + i * sizeof(T), &value, sizeof(T));
  }
}

// Calls f(T()) with the C++ type of `datatype`; false for no such type.
template <typename F>
bool WithType(int datatype, F f) {
  switch (datatype) {
    case FI_INT8: f(int8_t()); return true;
    case FI_UINT8: f(uint8_t()); return true;
    case FI_INT16: f(int16_t()); return true;
    case FI_UINT16: f(uint16_t()); return true;
    case FI_INT32: f(int32_t()); return true;
    case FI_UINT32: f(uint32_t()); return true;
    case FI_INT64: f(int64_t()); return true;
    case FI_UINT64: f(uint64_t()); return true;
    case FI_FLOAT: f(float()); return true;
    case FI_DOUBLE: f(double()); return true;
    case FI_FLOAT_COMPLEX: f(std::complex<float>()); return true;
    case FI_DOUBLE_COMPLEX: f(std::complex<double>()); return true;
    case FI_LONG_DOUBLE: f((long double)0); return true;
    case FI_LONG_DOUBLE_COMPLEX: f(std::complex<long double>()); return true;
    case FI_INT128: f(Int128()); return true;
    case FI_UINT128: f(Uint128()); return true;
  }
  return false;
}

}  // namespace

size_t AtomicDatatypeSize(int datatype) {
  size_t size = 0;
  WithType(datatype, [&size](auto value) { size = sizeof(value); });
  return size;
}

bool AtomicSupported(int datatype, int op, AtomicKind kind) {
  if (!InKind(op, kind)) return false;
  bool supported = false;
  WithType(datatype, [&](auto value) {
    using T = decltype(value);
    if constexpr (kIsInteger<T>) {
      supported = true;
    } else if constexpr (IsComplex<T>::value) {
      supported = !IsBitwise(op) && !IsOrdered(op);
    } else {
      supported = !IsBitwise(op);
    }
  });
  return supported;
}

int QueryAtomicKind(int datatype, int op, AtomicKind kind,
                    fi_atomic_attr* attr) {
  if (!AtomicSupported(datatype, op, kind)) return -FI_EOPNOTSUPP;
  attr->size = AtomicDatatypeSize(datatype);
  attr->count = kMaxAtomicBytes / attr->size;
  return 0;
}

int QueryAtomic(int datatype, int op, fi_atomic_attr* attr, uint64_t flags) {
  AtomicKind kind;
  switch (flags) {
    case 0: kind = AtomicKind::kWrite; break;
    case FI_FETCH_ATOMIC: kind = AtomicKind::kFetch; break;
    case FI_COMPARE_ATOMIC: kind = AtomicKind::kCompare; break;
    default: return -FI_EBADFLAGS;
  }
  if (attr == nullptr) return -FI_EINVAL;
  return QueryAtomicKind(datatype, op, kind, attr);
}

void ApplyAtomic(int datatype, int op, size_t count, void* target,
                 const void* operand, const void* compare, void* old) {
  WithType(datatype, [&](auto value) {
    Apply<decltype(value)>(op, count, static_cast<char*>(target),
                           static_cast<const char*>(operand),
                           static_cast<const char*>(compare),
                           static_cast<char*>(old));
  });
}

}  // namespace stream
}  // namespace fabric

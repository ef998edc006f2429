// File: fabric/providers/util/fid_cast.h
//
// Every object the library hands out begins with what the application
// holds: a UtilCq with its fid_cq, a VerbsMsgEp with its UtilEndpoint
// (which begins with its fid_ep), and every fid_* of the C API begins with
// its fid. FidCast takes the application's pointer back to the object. It
// compiles only for a type that declares, after its definition, the member
// it begins with (FABRIC_BEGINS_WITH), whose offset is checked to be 0 then:
// a member added in front, or a virtual function, fails the build instead
// of reading the wrong memory.
//
//   struct UtilCq {
//     fid_cq cq_fid;
//     ...
//   };
//   FABRIC_BEGINS_WITH(UtilCq, cq_fid);
//
//   UtilCq* cq = FidCast<UtilCq>(cq_fid);   // from fid_cq* or fid* alike
#ifndef FABRIC_PROVIDERS_UTIL_FID_CAST_H_
#define FABRIC_PROVIDERS_UTIL_FID_CAST_H_

#include <cstddef>

namespace fabric {

// What a type without FABRIC_BEGINS_WITH answers: FidCast refuses it.
constexpr bool BeginsWithDeclaredMember(const void*) { return false; }

template <typename Object, typename Pointer>
Object* FidCast(Pointer* pointer) {
  // Found by argument-dependent lookup in Object's namespace.
  static_assert(BeginsWithDeclaredMember(static_cast<const Object*>(nullptr)),
                "FidCast: declare the member the type begins with "
                "(FABRIC_BEGINS_WITH) after its definition");
  return reinterpret_cast<Object*>(pointer);
}

}  // namespace fabric

// At namespace scope, in Type's namespace, after Type's definition. offsetof
// of a type that is not standard-layout is conditionally supported; gcc and
// clang compute it and warn, which is what is silenced here.
#define FABRIC_BEGINS_WITH(Type, member)                                      \
  _Pragma("GCC diagnostic push")                                              \
      _Pragma("GCC diagnostic ignored \"-Winvalid-offsetof\"") static_assert( \
          offsetof(Type, member) == 0,                                        \
          #Type " must begin with " #member " (fid_cast.h)");                 \
  _Pragma("GCC diagnostic pop") constexpr bool BeginsWithDeclaredMember(      \
      const Type*) {                                                          \
    return true;                                                              \
  }

#endif  // FABRIC_PROVIDERS_UTIL_FID_CAST_H_

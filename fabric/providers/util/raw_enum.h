// File: fabric/providers/util/raw_enum.h
//
// Reading an enum field that another party filled in (the application's
// fi_info or fi_msg_atomic, an event from a system library): the value may
// lie outside the enum's range, and loading such a value as the enum is
// undefined behaviour. RawEnum loads its bytes as an int instead; compare
// that with the enumerators and convert only a value found valid.
//
//   switch (RawEnum(info->ep_attr->type)) {
//     case FI_EP_MSG: ...
//     default: return -FI_EINVAL;  // 99 lands here, defined
//   }
#ifndef FABRIC_PROVIDERS_UTIL_RAW_ENUM_H_
#define FABRIC_PROVIDERS_UTIL_RAW_ENUM_H_

#include <string.h>

#include <type_traits>

namespace fabric {

template <typename Enum>
int RawEnum(const Enum& field) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int),
                "an int-sized enum");
  int value;
  memcpy(&value, &field, sizeof(value));
  return value;
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_RAW_ENUM_H_

// File: fabric/api/core/enum_value.h
//
// Reading enum fields of structs the application filled in. C code may store
// any int in them; reading such a field as the C++ enum is undefined
// behaviour when the value is outside the enum's range, so it is read as the
// int it is.
#ifndef FABRIC_API_CORE_ENUM_VALUE_H_
#define FABRIC_API_CORE_ENUM_VALUE_H_

#include <string.h>

namespace fabric {

template <typename Enum>
int EnumValue(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized");
  int raw;
  memcpy(&raw, &value, sizeof(raw));
  return raw;
}

}  // namespace fabric

#endif  // FABRIC_API_CORE_ENUM_VALUE_H_

// Object members for the fi_info JSON: one call writes a key and its value.
#ifndef TOOLS_FI_INFO_JSON_MEMBERS_H_
#define TOOLS_FI_INFO_JSON_MEMBERS_H_

#include <rdma/fabric.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/fi_info/json_writer.h"

namespace fi_info_tool {

void NumberMember(JsonWriter& json, std::string_view key, uint64_t value);

// A string, or null for a null pointer.
void TextMember(JsonWriter& json, std::string_view key, const char* value);

// A string, or null for nullopt.
void OptionalTextMember(JsonWriter& json, std::string_view key,
                        const std::optional<std::string>& value);

void NameListMember(JsonWriter& json, std::string_view key,
                    const std::vector<std::string>& names);

// The name fi_tostr_r gives *value as a `type` (an enum value).
void TostrNameMember(JsonWriter& json, std::string_view key, const void* value,
                     enum fi_type type);

// The names fi_tostr_r gives the bits of *value as a `type` (flags).
void TostrFlagsMember(JsonWriter& json, std::string_view key, const void* value,
                      enum fi_type type);

// A version as "MAJOR.MINOR" (FI_MAJOR, FI_MINOR), as -v prints versions.
void VersionMember(JsonWriter& json, std::string_view key, uint32_t version);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_JSON_MEMBERS_H_

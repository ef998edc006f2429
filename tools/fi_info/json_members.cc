#include "tools/fi_info/json_members.h"

#include "tools/fi_info/tostr_text.h"

namespace fi_info_tool {

void NumberMember(JsonWriter& json, std::string_view key, uint64_t value) {
  json.Key(key);
  json.Number(value);
}

void TextMember(JsonWriter& json, std::string_view key, const char* value) {
  json.Key(key);
  json.StringOrNull(value);
}

void OptionalTextMember(JsonWriter& json, std::string_view key,
                        const std::optional<std::string>& value) {
  json.Key(key);
  if (value.has_value()) {
    json.String(*value);
  } else {
    json.Null();
  }
}

void NameListMember(JsonWriter& json, std::string_view key,
                    const std::vector<std::string>& names) {
  json.Key(key);
  json.BeginArray(JsonLayout::kOneLine);
  for (const std::string& name : names) json.String(name);
  json.EndArray();
}

void TostrNameMember(JsonWriter& json, std::string_view key, const void* value,
                     enum fi_type type) {
  json.Key(key);
  json.String(TostrText(value, type));
}

void TostrFlagsMember(JsonWriter& json, std::string_view key, const void* value,
                      enum fi_type type) {
  NameListMember(json, key, TostrFlagNames(value, type));
}

void VersionMember(JsonWriter& json, std::string_view key, uint32_t version) {
  json.Key(key);
  json.String(std::to_string(FI_MAJOR(version)) + "." +
              std::to_string(FI_MINOR(version)));
}

}  // namespace fi_info_tool

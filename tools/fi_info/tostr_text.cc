#include "tools/fi_info/tostr_text.h"

#include <string.h>

namespace fi_info_tool {
namespace {

constexpr size_t kTostrBufferSize = 8192;

}  // namespace

std::string TostrText(const void* data, enum fi_type type) {
  char buffer[kTostrBufferSize];
  buffer[0] = '\0';
  const char* text = fi_tostr_r(buffer, sizeof(buffer), data, type);
  return text != nullptr ? text : "";
}

std::vector<std::string> SplitTostrList(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view name = text.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) names.emplace_back(name);
    start = end + 1;
  }
  return names;
}

std::vector<std::string> TostrFlagNames(const void* data, enum fi_type type) {
  return SplitTostrList(TostrText(data, type));
}

std::optional<std::string> TostrField(std::string_view struct_text,
                                      std::string_view key) {
  size_t line_start = 0;
  while (line_start < struct_text.size()) {
    size_t line_end = struct_text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = struct_text.size();
    std::string_view line =
        struct_text.substr(line_start, line_end - line_start);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.size() >= key.size() + 2 && line.substr(0, key.size()) == key &&
        line.substr(key.size(), 2) == ": ") {
      return std::string(line.substr(key.size() + 2));
    }
    line_start = line_end + 1;
  }
  return std::nullopt;
}

bool ContainsIgnoringCase(const char* text,
                          const std::optional<std::string>& substring) {
  return !substring.has_value() ||
         strcasestr(text, substring->c_str()) != nullptr;
}

}  // namespace fi_info_tool

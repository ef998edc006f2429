#include "tools/fi_info/json_writer.h"

#include <cstdio>
#include <string>

namespace fi_info_tool {

JsonWriter::JsonWriter(std::ostream& out) : out_(out) {}

void JsonWriter::WriteNewLine() {
  out_ << '\n' << std::string(2 * open_.size(), ' ');
}

void JsonWriter::BeginValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  Container& container = open_.back();
  if (container.count > 0) out_ << ',';
  ++container.count;
  if (container.one_line) {
    if (container.count > 1) out_ << ' ';
  } else {
    WriteNewLine();
  }
}

void JsonWriter::BeginContainer(char opening, JsonLayout layout) {
  BeginValue();
  const bool inside_one_line = !open_.empty() && open_.back().one_line;
  out_ << opening;
  open_.push_back({inside_one_line || layout == JsonLayout::kOneLine, 0});
}

void JsonWriter::EndContainer(char closing) {
  const Container container = open_.back();
  open_.pop_back();
  if (container.count > 0 && !container.one_line) WriteNewLine();
  out_ << closing;
  if (open_.empty()) out_ << '\n';
}

void JsonWriter::BeginObject(JsonLayout layout) { BeginContainer('{', layout); }

void JsonWriter::EndObject() { EndContainer('}'); }

void JsonWriter::BeginArray(JsonLayout layout) { BeginContainer('[', layout); }

void JsonWriter::EndArray() { EndContainer(']'); }

void JsonWriter::Key(std::string_view key) {
  BeginValue();
  out_ << QuoteJsonString(key) << ": ";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeginValue();
  out_ << QuoteJsonString(value);
}

void JsonWriter::Number(uint64_t value) {
  BeginValue();
  out_ << value;
}

void JsonWriter::Null() {
  BeginValue();
  out_ << "null";
}

void JsonWriter::StringOrNull(const char* value) {
  if (value == nullptr) {
    Null();
  } else {
    String(value);
  }
}

std::string QuoteJsonString(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\r':
        quoted += "\\r";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\b':
        quoted += "\\b";
        break;
      case '\f':
        quoted += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[7];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                        static_cast<unsigned char>(c));
          quoted += escaped;
        } else {
          quoted += c;
        }
    }
  }
  quoted += '"';
  return quoted;
}

}  // namespace fi_info_tool

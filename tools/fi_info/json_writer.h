// A small streaming JSON writer: objects, arrays, strings, unsigned numbers
// and null. A container is written one member or element a line, indented by
// two spaces per level, or all on one line ("[1, 2]"; what it holds too).
// The caller nests Begin/End calls properly; the writer places the commas.
#ifndef TOOLS_FI_INFO_JSON_WRITER_H_
#define TOOLS_FI_INFO_JSON_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fi_info_tool {

enum class JsonLayout { kLines, kOneLine };

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out);

  void BeginObject(JsonLayout layout = JsonLayout::kLines);
  void EndObject();
  void BeginArray(JsonLayout layout = JsonLayout::kLines);
  void EndArray();

  // Inside an object: the name of the next member; its value follows.
  void Key(std::string_view key);

  void String(std::string_view value);
  void Number(uint64_t value);
  void Null();

  // A string, or null for a null pointer.
  void StringOrNull(const char* value);

 private:
  // Starts a value inside a container: a comma, then a new line (a space on
  // one line); nothing for a value that follows its key.
  void BeginValue();
  void BeginContainer(char opening, JsonLayout layout);
  void EndContainer(char closing);
  void WriteNewLine();

  struct Container {
    bool one_line;
    int count;  // members or elements so far
  };

  std::ostream& out_;
  std::vector<Container> open_;  // innermost last
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included. Bytes from 0x80 up are
// copied unchanged (UTF-8 stays UTF-8).
std::string QuoteJsonString(std::string_view text);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_JSON_WRITER_H_

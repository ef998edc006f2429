// File: fabric/api/text/text_buffer.h
//
// The caller's buffer of fi_tostr_r, filled as libfabric 1.17 fills it, so
// that truncated output is byte-identical too: text stops at size - 2
// characters, an address may take the buffer up to size - 1, and a flag list
// drops a trailing ", " from the whole buffer, wherever truncation left it.
#ifndef FABRIC_API_TEXT_TEXT_BUFFER_H_
#define FABRIC_API_TEXT_TEXT_BUFFER_H_

#include <stdarg.h>
#include <stddef.h>

namespace fabric::text {

class TextBuffer {
 public:
  // Clears buf; size must be at least 1.
  TextBuffer(char* buf, size_t size);

  void Append(const char* text) { Appendf("%s", text); }
  void Appendf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  void AppendAddressf(const char* format, ...)
      __attribute__((format(printf, 2, 3)));
  void TrimTrailingComma();

  char* data() const { return buf_; }
  size_t size() const { return size_; }
  size_t length() const;

 private:
  void Write(size_t room_after_text, const char* format, va_list args);

  char* buf_;
  size_t size_;
};

}  // namespace fabric::text

#endif  // FABRIC_API_TEXT_TEXT_BUFFER_H_

#include "fabric/api/text/text_buffer.h"

#include <stdio.h>
#include <string.h>

namespace fabric::text {

TextBuffer::TextBuffer(char* buf, size_t size) : buf_(buf), size_(size) {
  buf_[0] = '\0';
}

size_t TextBuffer::length() const { return strnlen(buf_, size_); }

void TextBuffer::Appendf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  Write(1, format, args);
  va_end(args);
}

// libfabric also clears the last byte of the buffer after an address.
void TextBuffer::AppendAddressf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  Write(0, format, args);
  va_end(args);
  buf_[size_ - 1] = '\0';
}

// Writes at the end of the text, leaving room_after_text bytes of the buffer
// unused besides the terminating NUL.
void TextBuffer::Write(size_t room_after_text, const char* format,
                       va_list args) {
  size_t used = length();
  if (used + room_after_text >= size_) return;
  vsnprintf(buf_ + used, size_ - room_after_text - used, format, args);
}

void TextBuffer::TrimTrailingComma() {
  size_t used = length();
  if (used >= 2 && memcmp(buf_ + used - 2, ", ", 2) == 0) buf_[used - 2] = '\0';
}

}  // namespace fabric::text

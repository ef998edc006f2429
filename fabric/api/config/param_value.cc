#include "fabric/api/config/param_value.h"

#include <errno.h>
#include <stdlib.h>

#include <climits>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fabric {
namespace {

absl::Status NotA(absl::string_view what, absl::string_view text) {
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not ", what));
}

// strtoll/strtoull with base 0 over the whole of `text`.
template <typename T, typename Parse>
absl::StatusOr<T> ParseWhole(absl::string_view text, Parse parse) {
  const std::string digits(absl::StripAsciiWhitespace(text));
  if (digits.empty()) return absl::InvalidArgumentError("empty number");
  char* end = nullptr;
  errno = 0;
  T value = parse(digits.c_str(), &end, 0);
  if (*end != '\0') return absl::InvalidArgumentError("not a number");
  if (errno == ERANGE) return absl::OutOfRangeError("out of range");
  return value;
}

}  // namespace

absl::StatusOr<int> ParseIntParam(absl::string_view text) {
  absl::StatusOr<long long> value =
      ParseWhole<long long>(text, [](const char* s, char** end, int base) {
        return strtoll(s, end, base);
      });
  if (!value.ok() || *value < INT_MIN || *value > INT_MAX) {
    return NotA("an integer (int)", text);
  }
  return static_cast<int>(*value);
}

absl::StatusOr<size_t> ParseSizeParam(absl::string_view text) {
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), "-")) {
    return NotA("a size (size_t)", text);
  }
  absl::StatusOr<unsigned long long> value = ParseWhole<unsigned long long>(
      text, [](const char* s, char** end, int base) {
        return strtoull(s, end, base);
      });
  if (!value.ok() || *value > SIZE_MAX) return NotA("a size (size_t)", text);
  return static_cast<size_t>(*value);
}

absl::StatusOr<bool> ParseBoolParam(absl::string_view text) {
  absl::string_view word = absl::StripAsciiWhitespace(text);
  for (absl::string_view no : {"0", "no", "false", "off"}) {
    if (absl::EqualsIgnoreCase(word, no)) return false;
  }
  for (absl::string_view yes : {"1", "yes", "true", "on"}) {
    if (absl::EqualsIgnoreCase(word, yes)) return true;
  }
  return NotA("a boolean (0/1, on/off, true/false, yes/no)", text);
}

absl::Status CheckParamValue(enum fi_param_type type, absl::string_view text) {
  switch (type) {
    case FI_PARAM_STRING:
      return absl::OkStatus();
    case FI_PARAM_INT:
      return ParseIntParam(text).status();
    case FI_PARAM_BOOL:
      return ParseBoolParam(text).status();
    case FI_PARAM_SIZE_T:
      return ParseSizeParam(text).status();
  }
  return absl::InvalidArgumentError("unknown parameter type");
}

}  // namespace fabric

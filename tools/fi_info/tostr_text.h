// Text from the library's fi_tostr_r, and the pieces fi_info takes from it:
// the names of flags and enum values, and single fields of a struct's text.
// Naming values through the library keeps them the same as in -v output.
#ifndef TOOLS_FI_INFO_TOSTR_TEXT_H_
#define TOOLS_FI_INFO_TOSTR_TEXT_H_

#include <rdma/fabric.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fi_info_tool {

// fi_tostr_r(data, type) into a buffer of libfabric's fi_info size (8192
// bytes, so a longer text is cut where libfabric's fi_info cuts it); "" if
// the library returns no text.
std::string TostrText(const void* data, enum fi_type type);

// The names in a flag list as fi_tostr writes it: "FI_MSG, FI_RMA" alone, or
// inside a struct's text "[ FI_MSG, FI_RMA ]"; "" and "[  ]" have none.
std::vector<std::string> SplitTostrList(std::string_view text);

// SplitTostrList(TostrText(data, type)).
std::vector<std::string> TostrFlagNames(const void* data, enum fi_type type);

// In a struct's text (fi_tostr of FI_TYPE_INFO, FI_TYPE_TX_ATTR, ...), the
// value of the first line "<indent>key: value"; nullopt when there is none.
std::optional<std::string> TostrField(std::string_view struct_text,
                                      std::string_view key);

// Whether `text` contains `substring`, ignoring case (-i and -g); always true
// without a substring.
bool ContainsIgnoringCase(const char* text,
                          const std::optional<std::string>& substring);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_TOSTR_TEXT_H_

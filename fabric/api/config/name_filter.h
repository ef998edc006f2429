// File: fabric/api/config/name_filter.h
//
// libfabric's include/exclude lists, the grammar of FI_PROVIDER, FI_LOG_PROV
// and FI_LOG_SUBSYS: names separated by commas, matched case-insensitively
// and without trimming; a leading '^' makes the whole list an exclude list.
// An empty list allows everything.
//
//   NameFilter only = NameFilter::Parse("tcp,udp");
//   only.Allows("TCP");    // true
//   only.Allows("verbs");  // false
//   NameFilter::Parse("^verbs").Allows("verbs");  // false
//   NameFilter::Parse("^verbs").Allows("tcp");    // true
#ifndef FABRIC_API_CONFIG_NAME_FILTER_H_
#define FABRIC_API_CONFIG_NAME_FILTER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fabric {

class NameFilter {
 public:
  // A filter that allows every name.
  NameFilter() = default;

  // The filter written as `list`. Empty names ("tcp,,udp") are kept, so that
  // a caller can reject them; they match no name.
  static NameFilter Parse(absl::string_view list);

  // Whether `name` passes: listed in an include list, or not listed in an
  // exclude list.
  bool Allows(absl::string_view name) const;

  // The names as written, without the '^'.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  bool exclude_ = false;
};

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_NAME_FILTER_H_

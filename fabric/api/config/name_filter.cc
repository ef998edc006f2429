#include "fabric/api/config/name_filter.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace fabric {

NameFilter NameFilter::Parse(absl::string_view list) {
  NameFilter filter;
  if (list.empty()) return filter;
  if (list.front() == '^') {
    filter.exclude_ = true;
    list.remove_prefix(1);
  }
  filter.names_ = absl::StrSplit(list, ',');
  return filter;
}

bool NameFilter::Allows(absl::string_view name) const {
  if (names_.empty()) return true;
  bool listed = false;
  for (const std::string& listed_name : names_) {
    if (absl::EqualsIgnoreCase(listed_name, name)) listed = true;
  }
  return listed != exclude_;
}

}  // namespace fabric

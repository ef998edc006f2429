#include "tools/fi_info/query.h"

#include <rdma/fabric.h>

#include <cstdlib>

#include "tools/fi_info/hints.h"
#include "tools/fi_info/info_json.h"
#include "tools/fi_info/text_output.h"

namespace fi_info_tool {
namespace {

const char* OptionalCString(const std::optional<std::string>& text) {
  return text.has_value() ? text->c_str() : nullptr;
}

// Prints the fi_info list (or, for -e/-g, the parameters); returns the exit
// code.
int PrintResult(const Options& options, const fi_info* list,
                std::ostream& out) {
  if (options.print_params) return -PrintParams(options.substring, out);
  if (options.format == OutputFormat::kJson) {
    WriteInfoListJson(list, options.substring, out);
  } else if (options.verbose) {
    PrintLongInfo(list, options.substring, out);
  } else if (options.list_providers) {
    PrintProviders(list, out);
  } else {
    PrintShortInfo(list, out);
  }
  return EXIT_SUCCESS;
}

}  // namespace

int RunQuery(const Options& options, std::ostream& out, std::ostream& errors) {
  UniqueInfo hints;
  if (options.use_hints) {
    hints = MakeHints(options);
    if (hints == nullptr) {
      errors << "error: fi_allocinfo failed\n";
      return EXIT_FAILURE;
    }
  }
  fi_info* list = nullptr;
  const int rc =
      fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
                 OptionalCString(options.node), OptionalCString(options.port),
                 options.flags, hints.get(), &list);
  if (rc != 0) {
    errors << "fi_getinfo: " << rc << "\n";
    return -rc;
  }
  const UniqueInfo owned_list(list);
  return PrintResult(options, list, out);
}

}  // namespace fi_info_tool

#include "tools/fi_info/usage.h"

#include <vector>

#include "tools/fi_info/explain.h"
#include "tools/fi_info/info_json.h"
#include "tools/fi_info/option_table.h"

namespace fi_info_tool {
namespace {

// One line per option, in libfabric's fi_info layout: "-c, --caps=ARG" for
// options with a value, "--version" for those without a short form.
void PrintOptionLines(std::ostream& out,
                      const std::vector<OptionSpec>& options) {
  for (const OptionSpec& option : options) {
    out << "  ";
    if (option.code < kVersionOption) {
      out << '-' << static_cast<char>(option.code) << ", ";
    }
    out << "--" << option.long_name;
    if (option.has_arg == required_argument) {
      out << '=' << option.argument_name;
    } else {
      out << '\t';
    }
    out << option.help << "\n";
  }
}

}  // namespace

void PrintUsage(std::ostream& out, const char* program) {
  out << "Usage: " << program << "\n";
  PrintOptionLines(out, kLibfabricOptions);
}

void PrintHelp(std::ostream& out, const char* program) {
  PrintUsage(out, program);
  out << "\nAdded to libfabric's fi_info options:\n";
  PrintOptionLines(out, kAddedOptions);
  out << "\n" << kExplainHelp << "\n" << kInfoJsonShape;
}

}  // namespace fi_info_tool

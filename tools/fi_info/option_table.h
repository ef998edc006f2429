// The options fi_info accepts, one table for getopt_long and for the usage
// text, so the two cannot drift apart.
#ifndef TOOLS_FI_INFO_OPTION_TABLE_H_
#define TOOLS_FI_INFO_OPTION_TABLE_H_

#include <getopt.h>

#include <vector>

namespace fi_info_tool {

// Codes of the options that have no short form (above any character).
constexpr int kVersionOption = 256;
constexpr int kFormatOption = 257;
constexpr int kExplainOption = 258;

struct OptionSpec {
  const char* long_name;
  int has_arg;                // no_argument or required_argument
  int code;                   // the short option character, or k*Option
  const char* argument_name;  // shown after "--name=" in the usage text
  const char* help;           // usage text, with its leading tabs
};

// libfabric's fi_info options, in its order and with its usage texts.
extern const std::vector<OptionSpec> kLibfabricOptions;

// This tool's additions (long options only).
extern const std::vector<OptionSpec> kAddedOptions;

// libfabric's short option string.
extern const char kShortOptions[];

// Both tables as getopt_long wants them, ending in an all-zero entry.
std::vector<option> GetoptLongOptions();

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_OPTION_TABLE_H_

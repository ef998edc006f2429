// fi_info's command line: libfabric's fi_info options, read the way its
// getopt_long loop reads them (first error or --version/--help ends the
// reading), plus this tool's --format and --explain.
#ifndef TOOLS_FI_INFO_OPTIONS_H_
#define TOOLS_FI_INFO_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace fi_info_tool {

enum class OutputFormat { kText, kJson };

struct Options {
  // Hints for fi_getinfo; they are passed only when use_hints is set (by
  // -c, -m, -t, -a, -p, -d or -f), as libfabric's fi_info does.
  bool use_hints = false;
  uint64_t caps = 0;             // -c, ORed over every -c
  uint64_t mode = ~uint64_t{0};  // all modes unless -m (the last -m wins)
  uint64_t ep_type = 0;          // -t (FI_EP_UNSPEC unless given)
  uint64_t addr_format = 0;      // -a (FI_FORMAT_UNSPEC unless given)
  std::optional<std::string> provider;  // -p
  std::optional<std::string> domain;    // -d
  std::optional<std::string> fabric;    // -f

  // The other fi_getinfo arguments.
  std::optional<std::string> node;  // -n, or -s (which also sets FI_SOURCE)
  std::optional<std::string> port;  // -P
  uint64_t flags = 0;               // FI_SOURCE (-s), FI_PROV_ATTR_ONLY (-l)

  // What to print: -e/-g (params) wins over -v/-i (verbose), which wins over
  // -l (providers); otherwise the short form.
  bool print_params = false;             // -e, -g
  bool verbose = false;                  // -v, -i
  bool list_providers = false;           // -l
  std::optional<std::string> substring;  // -g or -i (shared, the last wins)

  // This tool's additions.
  OutputFormat format = OutputFormat::kText;  // --format=text|json
  bool explain = false;                       // --explain
};

// What the command line asks for.
enum class Action {
  kRun,           // call fi_getinfo and print
  kPrintVersion,  // --version: print versions, exit 0
  kPrintHelp,     // -h/--help: print help, exit 1 (as libfabric's fi_info)
  kPrintUsage,    // an option getopt rejected (it said why): usage, exit 1
  kFail,          // a value was rejected (already reported): exit_code
};

struct CommandLine {
  Action action = Action::kRun;
  Options options;
  int exit_code = 0;  // for kFail
};

// Reads argv. getopt_long reports unknown options and missing arguments on
// stderr itself (naming argv[0]); rejected values (unknown capability names,
// --format values, ...) are reported on `errors`. getopt_long may reorder
// argv; operands are ignored, as libfabric's fi_info ignores them.
CommandLine ParseCommandLine(int argc, char** argv, std::ostream& errors);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_OPTIONS_H_

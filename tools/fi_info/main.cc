// fi_info: what libfabric offers on this machine, for given hints. The
// options and text output are those of libfabric's fi_info (1.17), byte for
// byte; --format=json and --explain are added (see --help).
#include <cstdlib>
#include <iostream>

#include "tools/fi_info/explain.h"
#include "tools/fi_info/options.h"
#include "tools/fi_info/query.h"
#include "tools/fi_info/usage.h"
#include "tools/fi_info/version.h"

int main(int argc, char** argv) {
  // No libfabric call comes before the options are read, so that --explain
  // can set the library's logging environment first.
  const fi_info_tool::CommandLine command_line =
      fi_info_tool::ParseCommandLine(argc, argv, std::cerr);
  switch (command_line.action) {
    case fi_info_tool::Action::kPrintVersion:
      fi_info_tool::PrintVersions(std::cout, argv[0]);
      return EXIT_SUCCESS;
    case fi_info_tool::Action::kPrintHelp:
      fi_info_tool::PrintHelp(std::cout, argv[0]);
      return EXIT_FAILURE;
    case fi_info_tool::Action::kPrintUsage:
      fi_info_tool::PrintUsage(std::cout, argv[0]);
      return EXIT_FAILURE;
    case fi_info_tool::Action::kFail:
      return command_line.exit_code;
    case fi_info_tool::Action::kRun:
      break;
  }
  if (command_line.options.explain) fi_info_tool::RequestExplanations();
  return fi_info_tool::RunQuery(command_line.options, std::cout, std::cerr);
}

#include "tools/fi_info/options.h"

#include <getopt.h>
#include <rdma/fabric.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "tools/fi_info/hint_names.h"
#include "tools/fi_info/option_table.h"

namespace fi_info_tool {
namespace {

CommandLine Failure(int exit_code) {
  CommandLine result;
  result.action = Action::kFail;
  result.exit_code = exit_code;
  return result;
}

CommandLine ActionOnly(Action action) {
  CommandLine result;
  result.action = action;
  return result;
}

bool ParseFormat(std::string_view text, OutputFormat* format,
                 std::ostream& errors) {
  if (text == "text") {
    *format = OutputFormat::kText;
    return true;
  }
  if (text == "json") {
    *format = OutputFormat::kJson;
    return true;
  }
  errors << "error: Unrecognized output format: " << text << "\n";
  return false;
}

}  // namespace

CommandLine ParseCommandLine(int argc, char** argv, std::ostream& errors) {
  const std::vector<option> long_options = GetoptLongOptions();
  CommandLine result;
  Options& options = result.options;
  // 0 makes glibc's getopt start over, so a process may parse more than once.
  optind = 0;
  int code;
  while ((code = getopt_long(argc, argv, kShortOptions, long_options.data(),
                             nullptr)) != -1) {
    bool value_ok = true;
    switch (code) {
      case 's':
        options.node = optarg;
        options.flags |= FI_SOURCE;
        break;
      case 'n':
        options.node = optarg;
        break;
      case 'P':
        options.port = optarg;
        break;
      case 'c':
        value_ok = ParseHintNameList(HintKind::kCapability, optarg,
                                     &options.caps, errors);
        options.use_hints = true;
        break;
      case 'm':
        options.mode = 0;
        value_ok =
            ParseHintNameList(HintKind::kMode, optarg, &options.mode, errors);
        options.use_hints = true;
        break;
      case 't':
        value_ok = ParseHintName(HintKind::kEndpointType, optarg,
                                 &options.ep_type, errors);
        options.use_hints = true;
        break;
      case 'a':
        value_ok = ParseHintName(HintKind::kAddressFormat, optarg,
                                 &options.addr_format, errors);
        options.use_hints = true;
        break;
      case 'p':
        options.provider = optarg;
        options.use_hints = true;
        break;
      case 'd':
        options.domain = optarg;
        options.use_hints = true;
        break;
      case 'f':
        options.fabric = optarg;
        options.use_hints = true;
        break;
      case 'g':
        options.substring = optarg;
        options.print_params = true;
        break;
      case 'e':
        options.print_params = true;
        break;
      case 'l':
        options.list_providers = true;
        options.flags |= FI_PROV_ATTR_ONLY;
        break;
      case 'i':
        options.substring = optarg;
        options.verbose = true;
        break;
      case 'v':
        options.verbose = true;
        break;
      case kFormatOption:
        value_ok = ParseFormat(optarg, &options.format, errors);
        break;
      case kExplainOption:
        options.explain = true;
        break;
      case kVersionOption:
        return ActionOnly(Action::kPrintVersion);
      case 'h':
        return ActionOnly(Action::kPrintHelp);
      default:
        return ActionOnly(Action::kPrintUsage);
    }
    // libfabric's fi_info exits with EINVAL at the first rejected value.
    if (!value_ok) return Failure(EINVAL);
  }
  if (options.format == OutputFormat::kJson && options.print_params) {
    errors << "error: --format=json does not apply to -e/--env or "
              "-g/--getenv\n";
    return Failure(EINVAL);
  }
  return result;
}

}  // namespace fi_info_tool

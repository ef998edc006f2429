#include "tools/fi_info/option_table.h"

namespace fi_info_tool {

const std::vector<OptionSpec> kLibfabricOptions = {
    {"help", no_argument, 'h', "", "\t\tdisplay this help and exit"},
    {"src_addr", required_argument, 's', "ADDR", "\t\tsource name or address"},
    {"node", required_argument, 'n', "NAME", "\t\tdest node name or address"},
    {"port", required_argument, 'P', "PNUM", "\t\tport number"},
    {"caps", required_argument, 'c', "CAP1|CAP2..",
     "\tone or more capabilities: FI_MSG|FI_RMA..."},
    {"mode", required_argument, 'm', "MOD1|MOD2..",
     "\tone or more modes, default all modes"},
    {"ep_type", required_argument, 't', "EPTYPE",
     "\t\tspecify single endpoint type: FI_EP_MSG, FI_EP_DGRAM..."},
    {"domain", required_argument, 'd', "DOMAIN", "\t\tspecify the domain name"},
    {"fabric", required_argument, 'f', "FABRIC", "\t\tspecify the fabric name"},
    {"addr_format", required_argument, 'a', "FMT",
     "\t\tspecify accepted address format: FI_FORMAT_UNSPEC, FI_SOCKADDR..."},
    {"provider", required_argument, 'p', "PROV",
     "\t\tspecify provider explicitly"},
    {"env", no_argument, 'e', "", "\t\tprint libfabric environment variables"},
    {"getenv", required_argument, 'g', "SUBSTR",
     "\t\tprint libfabric environment variables with substr"},
    {"info", required_argument, 'i', "",
     "\t\tprint fi_info structures containing substr"},
    {"list", no_argument, 'l', "", "\t\tlist available libfabric providers"},
    {"verbose", no_argument, 'v', "", "\t\tverbose output"},
    {"version", no_argument, kVersionOption, "",
     "\t\tprint version info and exit"},
};

const std::vector<OptionSpec> kAddedOptions = {
    {"format", required_argument, kFormatOption, "FMT",
     "\t\toutput format: text (default) or json"},
    {"explain", no_argument, kExplainOption, "",
     "\t\twhen nothing matches, log why each provider did not"},
};

const char kShortOptions[] = "s:n:P:c:m:t:a:p:d:f:eg:i:lhv";

std::vector<option> GetoptLongOptions() {
  std::vector<option> options;
  for (const std::vector<OptionSpec>* table :
       {&kLibfabricOptions, &kAddedOptions}) {
    for (const OptionSpec& spec : *table) {
      options.push_back({spec.long_name, spec.has_arg, nullptr, spec.code});
    }
  }
  options.push_back({nullptr, 0, nullptr, 0});
  return options;
}

}  // namespace fi_info_tool

#include "apps/common/args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "apps/common/check.h"

namespace apps {
namespace {

void PrintUsage(FILE* out, const ArgSpec& spec) {
  const char* name = ProgramName();
  fprintf(out,
          "%s: %s\n"
          "usage: %s [options]              run the server\n"
          "       %s [options] SERVER_ADDR  run the client\n"
          "options:\n"
          "  -p, --port PORT      the server's port (default %u; 0: the server "
          "picks one and prints it)\n"
          "  -b, --bind ADDR      local interface address (default "
          "127.0.0.1)\n"
          "      --prov NAME      provider, e.g. tcp (default: any)\n",
          name, spec.summary, name, name, spec.default_port);
  if (!spec.protocols.empty()) {
    fprintf(out, "      --protocol NAME  ");
    for (size_t i = 0; i < spec.protocols.size(); ++i) {
      fprintf(out, "%s%s", i ? "|" : "", spec.protocols[i].c_str());
    }
    fprintf(out, " (default %s)%s\n", spec.protocols[0].c_str(),
            spec.protocol_help);
  }
  fprintf(out, "  -h, --help           this text\n%s", spec.notes);
}

[[noreturn]] void BadUsage(const ArgSpec& spec, const char* reason,
                           const char* value) {
  fprintf(stderr, "%s: %s%s%s\n", ProgramName(), reason, value ? ": " : "",
          value ? value : "");
  PrintUsage(stderr, spec);
  exit(kUsageExit);
}

}  // namespace

Args ParseArgs(int argc, char** argv, const ArgSpec& spec) {
  enum { kProv = 1000, kProtocol };
  static const option kOptions[] = {
      {"port", required_argument, nullptr, 'p'},
      {"bind", required_argument, nullptr, 'b'},
      {"prov", required_argument, nullptr, kProv},
      {"protocol", required_argument, nullptr, kProtocol},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  Args args;
  args.port = spec.default_port;
  if (!spec.protocols.empty()) args.protocol = spec.protocols[0];
  opterr = 0;  // our own messages
  int c;
  while ((c = getopt_long(argc, argv, ":p:b:h", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'p': {
        char* end = nullptr;
        unsigned long port = strtoul(optarg, &end, 10);
        if (*optarg == '\0' || *end != '\0' || port > 65535) {
          BadUsage(spec, "bad port", optarg);
        }
        args.port = static_cast<uint16_t>(port);
        break;
      }
      case 'b':
        args.bind = optarg;
        break;
      case kProv:
        args.prov = optarg;
        break;
      case kProtocol: {
        bool known = false;
        for (const std::string& word : spec.protocols) known |= word == optarg;
        if (!known) {
          BadUsage(spec,
                   spec.protocols.empty() ? "no --protocol option here"
                                          : "unknown protocol",
                   optarg);
        }
        args.protocol = optarg;
        break;
      }
      case 'h':
        PrintUsage(stdout, spec);
        exit(0);
      case ':':
        BadUsage(spec, "option needs a value", argv[optind - 1]);
      default:
        BadUsage(spec, "unknown option", argv[optind - 1]);
    }
  }
  if (optind < argc) args.server = argv[optind++];
  if (optind < argc) BadUsage(spec, "too many arguments", argv[optind]);
  if (!args.is_server() && args.port == 0) {
    BadUsage(spec, "the client needs the server's port", "-p 0");
  }
  return args;
}

}  // namespace apps

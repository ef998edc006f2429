#include "apps/pingpong/options.h"

#include <getopt.h>
#include <strings.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pingpong {
namespace {

void PrintUsage(const char* program) {
  std::fprintf(stderr,
               "Usage:\n"
               "  %s [OPTIONS]\t\tstart server\n"
               "  %s [OPTIONS] <srv_addr>\tconnect to server\n"
               "  %s [OPTIONS] --loopback\tserver and client on 127.0.0.1,"
               " every provider and endpoint type\n"
               "  mpirun -np 2 %s [OPTIONS]\trank 0 server, rank 1 client\n"
               "\nPing pong client and server\n\nOptions:\n",
               program, program, program, program);
  const char* lines[][2] = {
      {"-B <src_port>", "source control port number (server: 47592, client: auto)"},
      {"-P <dst_port>", "destination control port number (client: 47592)"},
      {"-d <domain>", "domain name"},
      {"-p <provider>", "specific provider name eg tcp, udp"},
      {"-e <ep_type>", "endpoint type: msg|rdm|dgram (dgram)"},
      {"-I <number>", "number of iterations (10)"},
      {"-S <size>", "specific transfer size or 'all' (64 B to 1 MiB)"},
      {"-c", "enables data_integrity checks"},
      {"-m <transmit mode>", "transmit mode type: msg|tagged (msg)"},
      {"-h", "display this help output"},
      {"-v", "enable debugging output"},
      {"-6", "use IPv6 address"},
      {"--loopback", "run every case on this machine, one table each"},
      {"--mpi", "exchange addresses through MPI (automatic under mpirun)"},
      {"--settle-us <us>", "sleep before polling for each completion (for"
                           " instruction counts), report empty polls"},
      {"--receive-timeout <s>", "fail a receive that waits this long (5)"},
      {"--warmup <number>", "untimed round trips first (0; both sides)"},
  };
  for (const auto& line : lines) {
    std::fprintf(stderr, " %-20s %s\n", line[0], line[1]);
  }
}

// A decimal number in [0, max], as fi_pingpong's parse_ulong accepts it.
std::optional<long> ParseNumber(const char* text, long max) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || errno != 0 || value < 0 || value > max) {
    std::fprintf(stderr, "Error parsing \"%s\": %s\n", text,
                 std::strerror(errno != 0 ? errno : (*end ? EINVAL : ERANGE)));
    return std::nullopt;
  }
  return value;
}

std::optional<fi_ep_type> ParseEpType(const char* text) {
  if (strcasecmp(text, "msg") == 0) return FI_EP_MSG;
  if (strcasecmp(text, "rdm") == 0) return FI_EP_RDM;
  if (strcasecmp(text, "dgram") == 0) return FI_EP_DGRAM;
  std::fprintf(stderr, "Unknown endpoint : %s\n", text);
  return std::nullopt;
}

// Applies one option; false when its value is bad.
bool ApplyOption(int option, const char* value, Options& options) {
  switch (option) {
    case 'B':
    case 'P': {
      auto port = ParseNumber(value, UINT16_MAX);
      if (!port) return false;
      (option == 'B' ? options.src_port : options.dst_port) =
          static_cast<uint16_t>(*port);
      return true;
    }
    case 'd':
      options.domain = value;
      return true;
    case 'p':
      options.provider = value;
      return true;
    case 'e': {
      auto type = ParseEpType(value);
      if (!type) return false;
      options.ep_type = *type;
      options.ep_type_given = true;
      return true;
    }
    case 'I': {
      auto iterations = ParseNumber(value, INT_MAX);
      if (!iterations) return false;
      options.iterations = static_cast<int>(*iterations);
      return true;
    }
    case 'S': {
      if (strcasecmp(value, "all") == 0) {
        options.sizes = SizeChoice::kAll;
        return true;
      }
      auto size = ParseNumber(value, INT_MAX);
      if (!size) return false;
      options.sizes = SizeChoice::kOne;
      options.transfer_size = static_cast<int>(*size);
      return true;
    }
    case 'm':
      if (strcasecmp(value, "msg") == 0 || strcasecmp(value, "tagged") == 0) {
        options.tagged = strcasecmp(value, "tagged") == 0;
        return true;
      }
      std::fprintf(stderr, "Unknown transmit mode : %s\n", value);
      return false;
    case 'c':
      options.check_data = true;
      return true;
    case '6':
      options.ipv6 = true;
      return true;
    case 'v':
      options.verbose = true;
      return true;
    default:  // -h, an unknown option or a missing value (getopt said why)
      return false;
  }
}

enum LongOption {
  kLoopback = 256,
  kMpi,
  kSettleUs,
  kReceiveTimeout,
  kWarmup
};

}  // namespace

std::optional<Options> ParseOptions(int argc, char** argv) {
  static const option kLongOptions[] = {
      {"loopback", no_argument, nullptr, kLoopback},
      {"mpi", no_argument, nullptr, kMpi},
      {"settle-us", required_argument, nullptr, kSettleUs},
      {"receive-timeout", required_argument, nullptr, kReceiveTimeout},
      {"warmup", required_argument, nullptr, kWarmup},
      {nullptr, 0, nullptr, 0},
  };
  Options options;
  bool loopback = false;
  // Under mpirun unless told otherwise: Open MPI sets this in every rank.
  bool mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  optind = 1;
  int option;
  while ((option = getopt_long(argc, argv, "hvd:p:e:I:S:B:P:cm:6", kLongOptions,
                               nullptr)) != -1) {
    if (option == kLoopback) {
      loopback = true;
    } else if (option == kMpi) {
      mpi = true;
    } else if (option == kWarmup) {
      auto value = ParseNumber(optarg, INT_MAX);
      if (!value) {
        PrintUsage(argv[0]);
        return std::nullopt;
      }
      options.warmup = static_cast<int>(*value);
    } else if (option == kSettleUs || option == kReceiveTimeout) {
      auto value = ParseNumber(optarg, 10'000'000);
      if (!value || (option == kReceiveTimeout && *value == 0)) {
        if (value) std::fprintf(stderr, "--receive-timeout must be > 0\n");
        PrintUsage(argv[0]);
        return std::nullopt;
      }
      (option == kSettleUs ? options.settle_us : options.receive_timeout_s) =
          static_cast<int>(*value);
    } else if (!ApplyOption(option, optarg, options)) {
      PrintUsage(argv[0]);
      return std::nullopt;
    }
  }
  if (argc - optind > 1 || (optind < argc && (loopback || mpi))) {
    std::fprintf(stderr, "Unexpected argument: %s\n", argv[argc - 1]);
    PrintUsage(argv[0]);
    return std::nullopt;
  }
  if (loopback) {
    options.mode = Mode::kLoopback;
  } else if (mpi) {
    options.mode = Mode::kMpi;
  } else if (optind < argc) {
    options.mode = Mode::kClient;
    options.server_address = argv[optind];
  }
  return options;
}

std::vector<std::string> TestArguments(const Options& options) {
  std::vector<std::string> args = {"-I", std::to_string(options.iterations)};
  if (options.sizes == SizeChoice::kAll) {
    args.insert(args.end(), {"-S", "all"});
  } else if (options.sizes == SizeChoice::kOne) {
    args.insert(args.end(), {"-S", std::to_string(options.transfer_size)});
  }
  if (!options.domain.empty()) args.insert(args.end(), {"-d", options.domain});
  if (options.check_data) args.push_back("-c");
  if (options.tagged) args.insert(args.end(), {"-m", "tagged"});
  if (options.ipv6) args.push_back("-6");
  if (options.verbose) args.push_back("-v");
  if (options.settle_us > 0) {
    args.insert(args.end(),
                {"--settle-us", std::to_string(options.settle_us)});
  }
  if (options.warmup > 0) {
    args.insert(args.end(), {"--warmup", std::to_string(options.warmup)});
  }
  if (options.receive_timeout_s != Options().receive_timeout_s) {
    args.insert(args.end(), {"--receive-timeout",
                             std::to_string(options.receive_timeout_s)});
  }
  return args;
}

}  // namespace pingpong

// The command line: fi_pingpong's options, plus --loopback and --mpi.
#ifndef APPS_PINGPONG_OPTIONS_H_
#define APPS_PINGPONG_OPTIONS_H_

#include <rdma/fabric.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pingpong {

// What to run: one side of a pair, or every case on this machine.
enum class Mode {
  kServer,    // no address argument: wait for a client
  kClient,    // an address argument: connect to that server
  kLoopback,  // --loopback: server and client here, per provider x ep type
  kMpi,       // under mpirun (or --mpi): rank 0 serves, rank 1 is the client
};

// Which transfer size(s) to run, as fi_pingpong chooses them.
enum class SizeChoice {
  kDefaultList,  // no -S: 64 B .. 1 MiB, six sizes
  kAll,          // -S all: 0, 1, 2, 3, 4, 6, 8, 12, ... up to the limit
  kOne,          // -S N
};

struct Options {
  Mode mode = Mode::kServer;
  std::string server_address;   // client: where the server runs
  uint16_t src_port = 0;        // -B; the server's default is 47592
  uint16_t dst_port = 0;        // -P; the client's default is 47592
  std::string provider;         // -p; empty: any
  std::string domain;           // -d; empty: any
  fi_ep_type ep_type = FI_EP_DGRAM;  // -e
  bool ep_type_given = false;   // --loopback runs every type unless -e
  int iterations = 10;          // -I
  SizeChoice sizes = SizeChoice::kDefaultList;
  int transfer_size = 64;       // -S N
  bool check_data = false;      // -c
  bool tagged = false;          // -m tagged
  bool ipv6 = false;            // -6
  bool verbose = false;         // -v
  // --settle-us N: the timed loop sleeps N us before it polls for each
  // completion, and the client reports the polls that found nothing
  // ("empty polls: K" on stderr). For counting instructions per message
  // (bench:verbs_instructions): a spinning wait's empty polls grow with the
  // round trip, not with the library's work.
  int settle_us = 0;
  // --warmup N: N untimed round trips before each size's timed loop, so
  // that it starts with connections made (an RDM endpoint connects on its
  // first send; how long that spins depends on the machine's speed, and
  // bench:verbs_instructions counts only the timed loop). Both sides need
  // the same N.
  int warmup = 0;
  // --receive-timeout S: a receive that sees nothing for this long fails
  // the run (a lost datagram or a dead peer ends it instead of hanging
  // it), and so does a control-channel receive; connection events wait
  // this long or 10 s, whichever is longer.
  int receive_timeout_s = 5;
};

inline constexpr uint16_t kDefaultControlPort = 47592;

// Parses argv. On a bad argument, or -h, prints the reason and the usage text
// on stderr and returns nothing.
std::optional<Options> ParseOptions(int argc, char** argv);

// The arguments that make another pingpong process run the same test as
// `options` (everything but the mode, address and ports): --loopback passes
// them to the server and client it starts.
std::vector<std::string> TestArguments(const Options& options);

}  // namespace pingpong

#endif  // APPS_PINGPONG_OPTIONS_H_

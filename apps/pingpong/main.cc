// pingpong: fi_pingpong's test written as a guide to the libfabric API.
// Modes: server (no address), client (the server's address), --loopback
// (both, every provider and endpoint type), and under mpirun -np 2 (rank 0
// serves, rank 1 connects; MPI carries only the endpoint names).
//
// Each run: out-of-band channel -> fabric setup (fabric_setup.cc) -> timed
// ping-pong per size (transfer.cc) -> "fin" -> every object closed.
#include <rdma/fabric.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "apps/pingpong/fabric_setup.h"
#include "apps/pingpong/loopback.h"
#include "apps/pingpong/mpi_control.h"
#include "apps/pingpong/options.h"
#include "apps/pingpong/tcp_control.h"
#include "apps/pingpong/transfer.h"

namespace {

using namespace pingpong;

// One side of a pair, once the out-of-band channel to the peer is up.
int RunSide(const Options& options, bool is_client, OutOfBand& channel) {
  FabricObjects objects;
  int ret = SetUpFabric(options, is_client, channel, objects);
  if (!ret && options.verbose) {
    std::fprintf(stderr, "%s", fi_tostr(objects.info, FI_TYPE_INFO));
  }
  if (!ret) ret = RunPingPong(options, is_client, channel, objects);
  if (!ret) ret = Finish(options, objects);
  int closed = objects.Close();
  return ret ? ret : closed;
}

int Run(const Options& options, int* argc, char*** argv) {
  switch (options.mode) {
    case Mode::kLoopback:
      return RunLoopback(options);
    case Mode::kMpi: {
      std::unique_ptr<MpiControl> mpi = MpiControl::Init(argc, argv);
      if (!mpi) return -1;
      return RunSide(options, mpi->is_client(), *mpi);
    }
    case Mode::kServer: {
      uint16_t port = options.src_port ? options.src_port : kDefaultControlPort;
      std::unique_ptr<TcpControl> control =
          TcpControl::Accept(port, options.ipv6, options.receive_timeout_s);
      return control ? RunSide(options, /*is_client=*/false, *control) : -1;
    }
    case Mode::kClient: {
      uint16_t port = options.dst_port ? options.dst_port : kDefaultControlPort;
      std::unique_ptr<TcpControl> control = TcpControl::Connect(
          options.server_address, port, options.src_port, options.ipv6,
          options.receive_timeout_s);
      return control ? RunSide(options, /*is_client=*/true, *control) : -1;
    }
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = ParseOptions(argc, argv);
  if (!options) return EXIT_FAILURE;
  return Run(*options, &argc, &argv) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

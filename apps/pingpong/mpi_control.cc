#include "apps/pingpong/mpi_control.h"

#include <mpi.h>

#include <cerrno>
#include <climits>
#include <cstdio>

namespace pingpong {
namespace {

constexpr int kTag = 47592;

int ReportMpiError(const char* call, int error) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(error, text, &length);
  std::fprintf(stderr, "mpi: %s: %.*s\n", call, length, text);
  return -EIO;
}

}  // namespace

std::unique_ptr<MpiControl> MpiControl::Init(int* argc, char*** argv) {
  int error = MPI_Init(argc, argv);
  if (error != MPI_SUCCESS) return ReportMpiError("MPI_Init", error), nullptr;
  // Return errors instead of aborting, so that they are reported here.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size != 2) {
    std::fprintf(stderr, "mpi: pingpong needs 2 ranks (mpirun -np 2), not %d\n",
                 size);
    MPI_Finalize();
    return nullptr;
  }
  return std::unique_ptr<MpiControl>(new MpiControl(rank));
}

MpiControl::~MpiControl() { MPI_Finalize(); }

int MpiControl::Send(const void* data, size_t size) {
  if (size > INT_MAX) return -EMSGSIZE;
  int error = MPI_Send(data, static_cast<int>(size), MPI_BYTE, 1 - rank_, kTag,
                       MPI_COMM_WORLD);
  return error == MPI_SUCCESS ? 0 : ReportMpiError("MPI_Send", error);
}

int MpiControl::Recv(void* data, size_t size) {
  if (size > INT_MAX) return -EMSGSIZE;
  int error = MPI_Recv(data, static_cast<int>(size), MPI_BYTE, 1 - rank_, kTag,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return error == MPI_SUCCESS ? 0 : ReportMpiError("MPI_Recv", error);
}

}  // namespace pingpong

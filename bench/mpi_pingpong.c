// The MPI program of bench:mpi (mpi.sh runs it under each transport): two
// ranks measure what MPI users see of a transport between two processes.
//
// Rank 0 prints one line per measure, "NAME BYTES VALUE":
//   lat 8|64|4096 USEC        ping-pong, half a round trip
//   stream 1048576 GBPS       rank 0 streams windows of nonblocking sends,
//                             rank 1 answers each window with 1 byte
//   pingpong 1048576 GBPS     ping-pong: bytes per half round trip
//   allreduce 8 USEC          MPI_Allreduce of one 8-byte integer, per call
// and every rank one line "libfabric RANK PATH": the libfabric.so the
// process mapped (from /proc/self/maps), or "none".
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/openmpi/mapped_libfabric.h"

enum {
  kWarmup = 200,
  kLatencyIterations = 20000,
  kLargeSize = 1 << 20,
  kWindow = 16,
  kStreamWindows = 40,
  kPingPongIterations = 200,
  kAllreduceIterations = 10000,
};

static int rank;

// Seconds per round trip of `size` bytes between ranks 0 and 1, over
// `iterations` round trips after kWarmup more.
static double RoundTrip(char* buf, int size, int iterations) {
  const int peer = 1 - rank;
  double start = 0;
  for (int i = 0; i < kWarmup + iterations; ++i) {
    if (i == kWarmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    if (rank == 0) {
      MPI_Send(buf, size, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, size, MPI_CHAR, peer, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, size, MPI_CHAR, peer, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buf, size, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - start) / iterations;
}

// Bytes per second of kLargeSize messages streamed from rank 0 to rank 1,
// kWindow in flight, each window answered with one byte.
static double Stream(char* buf) {
  MPI_Request requests[kWindow];
  char ack = 0;
  double start = 0;
  for (int w = 0; w < 2 + kStreamWindows; ++w) {
    if (w == 2) {  // two windows of warmup
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    for (int i = 0; i < kWindow; ++i) {
      char* piece = buf + (size_t)i * kLargeSize;
      if (rank == 0) {
        MPI_Isend(piece, kLargeSize, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                  &requests[i]);
      } else {
        MPI_Irecv(piece, kLargeSize, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                  &requests[i]);
      }
    }
    MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
    if (rank == 0) {
      MPI_Recv(&ack, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(&ack, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
    }
  }
  double seconds = MPI_Wtime() - start;
  return (double)kStreamWindows * kWindow * kLargeSize / seconds;
}

// Seconds per MPI_Allreduce of one 8-byte integer.
static double Allreduce(void) {
  int64_t in = rank, out = 0;
  double start = 0;
  for (int i = 0; i < kWarmup + kAllreduceIterations; ++i) {
    if (i == kWarmup) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    MPI_Allreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (out != 1) {
      fprintf(stderr, "rank %d: MPI_Allreduce gave %lld, want 1\n", rank,
              (long long)out);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  return (MPI_Wtime() - start) / kAllreduceIterations;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: 2 ranks, not %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096];
  MappedLibfabric(path, sizeof(path));
  // One rank's line at a time.
  for (int r = 0; r < 2; ++r) {
    if (r == rank) {
      printf("libfabric %d %s\n", rank, path);
      fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  char* buf = malloc((size_t)kWindow * kLargeSize);
  if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(buf, rank + 1, (size_t)kWindow * kLargeSize);
  const int latency_sizes[] = {8, 64, 4096};
  for (int i = 0; i < 3; ++i) {
    double seconds = RoundTrip(buf, latency_sizes[i], kLatencyIterations);
    if (rank == 0) printf("lat %d %.3f\n", latency_sizes[i], seconds / 2 * 1e6);
  }
  double stream = Stream(buf);
  if (rank == 0) printf("stream %d %.3f\n", kLargeSize, stream / 1e9);
  double trip = RoundTrip(buf, kLargeSize, kPingPongIterations);
  if (rank == 0) {
    printf("pingpong %d %.3f\n", kLargeSize, kLargeSize / (trip / 2) / 1e9);
  }
  double allreduce = Allreduce();
  if (rank == 0) printf("allreduce 8 %.3f\n", allreduce * 1e6);
  free(buf);
  MPI_Finalize();
  return 0;
}

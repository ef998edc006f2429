// An MPI program whose every message is checked: collectives (MPI_Allreduce,
// MPI_Bcast from each root in turn) and point-to-point messages between
// every pair of ranks, each of a size and contents only its sender and
// receiver agree on, so that a message delivered to a receive it does not
// belong to shows up as MPI_ERR_TRUNCATE or as wrong bytes. Run over our
// libfabric.so.1 by two_namespaces_test.sh.
//
// Prints one line per rank: "rank R of N: ok, netns NET, libfabric PATH"
// (NET: the inode of its network namespace; PATH: the libfabric.so the
// process mapped, from /proc/self/maps). Exits 1 (through MPI_Abort) on
// the first wrong result.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/openmpi/mapped_libfabric.h"

enum { kRounds = 50, kMaxInts = 5000 };

static int rank, size;

static void Fail(const char* what, int round, long got, long want) {
  fprintf(stderr, "rank %d round %d: %s: got %ld, want %ld\n", rank, round,
          what, got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static int Expected(int from, int to, int round, int i) {
  return from * 1000003 + to * 7919 + round * 31 + i;
}

// Ints in the message from `from` to `to` in `round`: differs per pair.
static int Count(int from, int to, int round) {
  return 1 + (from * 131 + to * 17 + round * 37) % kMaxInts;
}

static void AllPairs(int round, int* out, int* in) {
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    int n_out = Count(rank, peer, round), n_in = Count(peer, rank, round);
    for (int i = 0; i < n_out; ++i) out[i] = Expected(rank, peer, round, i);
    MPI_Status status;
    MPI_Sendrecv(out, n_out, MPI_INT, peer, round, in, n_in, MPI_INT, peer,
                 round, MPI_COMM_WORLD, &status);
    int got = 0;
    MPI_Get_count(&status, MPI_INT, &got);
    if (got != n_in) Fail("point-to-point count", round, got, n_in);
    for (int i = 0; i < n_in; ++i) {
      if (in[i] != Expected(peer, rank, round, i)) {
        Fail("point-to-point data", round, in[i], Expected(peer, rank, round, i));
      }
    }
  }
}

// Rank 0's first receives are directed at the last rank, which sends late:
// meanwhile the other ranks' messages arrive from peers rank 0 has not
// addressed yet (Open MPI inserts a peer's address into the fabric's AV at
// its first use), and the receives directed at them come after.
static void FirstContact(void) {
  enum { kTag = 4242 };
  if (rank != 0) {
    if (rank == size - 1) usleep(300 * 1000);
    MPI_Send(&rank, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD);
    return;
  }
  for (int i = 1; i < size; ++i) {
    int from = i == 1 ? size - 1 : i - 1, got = -1;
    MPI_Recv(&got, 1, MPI_INT, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != from) Fail("first contact", -1, got, from);
  }
}

static void Collectives(int round, int* buf) {
  long mine = rank + round, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long want = (long)size * round + (long)size * (size - 1) / 2;
  if (sum != want) Fail("allreduce", round, sum, want);
  int root = round % size, n = Count(root, root, round);
  for (int i = 0; i < n; ++i) buf[i] = rank == root ? Expected(root, 0, round, i) : -1;
  MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    if (buf[i] != Expected(root, 0, round, i)) {
      Fail("bcast", round, buf[i], Expected(root, 0, round, i));
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* out = malloc(kMaxInts * sizeof(int));
  int* in = malloc(kMaxInts * sizeof(int));
  if (out == NULL || in == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  FirstContact();
  for (int round = 0; round < kRounds; ++round) {
    // Collectives first: their messages are the first a rank receives.
    Collectives(round, in);
    AllPairs(round, out, in);
  }
  struct stat net;
  char library[4096];
  MappedLibfabric(library, sizeof(library));
  if (stat("/proc/self/ns/net", &net) != 0) net.st_ino = 0;
  printf("rank %d of %d: ok, netns %lu, libfabric %s\n", rank, size,
         (unsigned long)net.st_ino, library);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}

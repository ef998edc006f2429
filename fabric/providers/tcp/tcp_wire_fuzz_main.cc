// tcp_wire_fuzz SEED ITERATIONS [CORPUS_FILE...]: fuzzes the tcp wire
// decoders (tcp_wire_fuzz.h); each corpus file is one stream to mutate.
// Exits 1 at the first broken invariant, naming the seed and iteration.
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fabric/providers/tcp/tcp_wire_fuzz.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SEED ITERATIONS [CORPUS_FILE...]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> corpus;
  for (int i = 3; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    std::stringstream bytes;
    bytes << in.rdbuf();
    corpus.push_back(bytes.str());
  }
  fabric::tcp::FuzzStats stats;
  std::string error;
  bool ok = fabric::tcp::RunWireFuzz(strtoull(argv[1], nullptr, 0),
                                     strtoull(argv[2], nullptr, 0), corpus,
                                     &stats, &error);
  printf("%llu streams (%llu messages): %llu ended cleanly, %llu refused "
         "(FI_EIO); handshakes: %llu done, %llu failed\n",
         (unsigned long long)stats.streams, (unsigned long long)stats.messages,
         (unsigned long long)stats.closed_clean,
         (unsigned long long)stats.closed_eio,
         (unsigned long long)stats.cm_done,
         (unsigned long long)stats.cm_failed);
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", error.c_str());
    return 1;
  }
  return 0;
}

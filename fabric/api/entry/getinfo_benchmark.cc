// Measures fi_getinfo against Debian's libfabric 1.17 in the same process:
// the first call (discovery start-up) and steady-state calls per second for
// NULL hints and for tcp MSG hints, interleaved over several rounds, medians
// and our/their ratios printed.
//
//   bazel run -c opt //fabric/api/entry:getinfo_benchmark
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

constexpr char kDebianLibrary[] = "/usr/lib/x86_64-linux-gnu/libfabric.so.1";
constexpr uint32_t kVersion = FI_VERSION(1, 17);  // both libraries serve it
constexpr int kRounds = 7;
constexpr int kCallsPerRound = 200;

using GetInfoFn = int (*)(uint32_t, const char*, const char*, uint64_t,
                          const fi_info*, fi_info**);
using FreeInfoFn = void (*)(fi_info*);
using DupInfoFn = fi_info* (*)(const fi_info*);

struct Library {
  const char* name;
  GetInfoFn getinfo;
  FreeInfoFn freeinfo;
  DupInfoFn dupinfo;
};

double Seconds(std::function<void()> work) {
  auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

// Hints for a tcp MSG endpoint, built with the library's own allocator.
fi_info* TcpMsgHints(const Library& lib) {
  fi_info* hints = lib.dupinfo(nullptr);
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("tcp");
  return hints;
}

// Microseconds per call, median over rounds.
double MedianMicros(const Library& lib, const fi_info* hints) {
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    double seconds = Seconds([&] {
      for (int i = 0; i < kCallsPerRound; ++i) {
        fi_info* info = nullptr;
        if (lib.getinfo(kVersion, nullptr, nullptr, 0, hints, &info) == 0) {
          lib.freeinfo(info);
        }
      }
    });
    rounds.push_back(seconds * 1e6 / kCallsPerRound);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main() {
  void* debian = dlopen(kDebianLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (debian == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s (install libfabric1)\n",
                 kDebianLibrary, dlerror());
    return 1;
  }
  Library ours = {"ours", fi_getinfo, fi_freeinfo, fi_dupinfo};
  Library theirs = {
      "libfabric 1.17",
      reinterpret_cast<GetInfoFn>(dlsym(debian, "fi_getinfo")),
      reinterpret_cast<FreeInfoFn>(dlsym(debian, "fi_freeinfo")),
      reinterpret_cast<DupInfoFn>(dlsym(debian, "fi_dupinfo")),
  };
  if (!theirs.getinfo || !theirs.freeinfo || !theirs.dupinfo) {
    std::fprintf(stderr, "missing symbols in %s\n", kDebianLibrary);
    return 1;
  }

  std::printf("fi_getinfo, %d rounds x %d calls, median per call\n", kRounds,
              kCallsPerRound);
  double first[2];
  const Library* libs[2] = {&ours, &theirs};
  for (int i = 0; i < 2; ++i) {
    first[i] = Seconds([&] {
      fi_info* info = nullptr;
      if (libs[i]->getinfo(kVersion, nullptr, nullptr, 0, nullptr, &info) ==
          0) {
        libs[i]->freeinfo(info);
      }
    });
  }
  std::printf("%-28s %12s %16s %8s\n", "case", "ours (us)", "libfabric (us)",
              "ratio");
  // One row: microseconds per call, calls per second, and the ratio.
  auto row = [](const char* name, double ours_us, double theirs_us) {
    std::printf("%-28s %12.1f %16.1f %8.3f   (%.0f vs %.0f calls/s)\n", name,
                ours_us, theirs_us, ours_us / theirs_us, 1e6 / ours_us,
                1e6 / theirs_us);
  };
  row("first call, NULL hints", first[0] * 1e6, first[1] * 1e6);

  fi_info* our_hints = TcpMsgHints(ours);
  fi_info* their_hints = TcpMsgHints(theirs);
  // Interleave the libraries so drift in machine load hits both alike.
  double null_ours = 0, null_theirs = 0, tcp_ours = 0, tcp_theirs = 0;
  for (int pass = 0; pass < 2; ++pass) {
    null_ours += MedianMicros(ours, nullptr);
    null_theirs += MedianMicros(theirs, nullptr);
    tcp_ours += MedianMicros(ours, our_hints);
    tcp_theirs += MedianMicros(theirs, their_hints);
  }
  row("NULL hints", null_ours / 2, null_theirs / 2);
  row("tcp FI_EP_MSG hints", tcp_ours / 2, tcp_theirs / 2);
  std::printf("ratio = ours / libfabric time per call (goal: <= 0.5)\n");
  ours.freeinfo(our_hints);
  theirs.freeinfo(their_hints);
  return 0;
}

#include "apps/pingpong/result_table.h"

#include <cinttypes>
#include <cstdio>

namespace pingpong {
namespace {

constexpr int kTransfersPerIteration = 2;  // a ping and a pong

}  // namespace

std::string ResultHeader() {
  char line[128];
  std::snprintf(line, sizeof(line), "%-8s%-8s%-9s%-8s%8s %10s%13s%13s\n",
                "bytes", "#sent", "#ack", "total", "time", "MB/sec",
                "usec/xfer", "Mxfers/sec");
  return line;
}

std::string SizeText(uint64_t size) {
  uint64_t base = 1;
  const char* magnitude = "";
  if (size >= (1ULL << 30)) {
    base = 1ULL << 30;
    magnitude = "g";
  } else if (size >= (1ULL << 20)) {
    base = 1ULL << 20;
    magnitude = "m";
  } else if (size >= (1ULL << 10)) {
    base = 1ULL << 10;
    magnitude = "k";
  }
  // One decimal only below 10 units, and only when it is not 0.
  uint64_t tenths = size / base < 10 ? (size % base) * 10 / base : 0;
  char text[32];
  if (tenths != 0) {
    std::snprintf(text, sizeof(text), "%" PRIu64 ".%" PRIu64 "%s", size / base,
                  tenths, magnitude);
  } else {
    std::snprintf(text, sizeof(text), "%" PRIu64 "%s", size / base, magnitude);
  }
  return text;
}

std::string CountText(uint64_t count) {
  char text[32];
  if (count >= 1000000000) {
    std::snprintf(text, sizeof(text), "%" PRIu64 "b", count / 1000000000);
  } else if (count >= 1000000) {
    std::snprintf(text, sizeof(text), "%" PRIu64 "m", count / 1000000);
  } else if (count >= 1000) {
    std::snprintf(text, sizeof(text), "%" PRIu64 "k", count / 1000);
  } else {
    std::snprintf(text, sizeof(text), "%" PRIu64, count);
  }
  return text;
}

std::string ResultRow(int size, long sent, long acked, int64_t elapsed_usec) {
  uint64_t bytes =
      static_cast<uint64_t>(sent) * static_cast<uint64_t>(size) *
      kTransfersPerIteration;
  // "=N" when every message came back, else "+lost" or "-extra".
  char acked_sign = sent == acked ? '=' : (sent < acked ? '-' : '+');
  long acked_shown = sent == acked ? acked : (sent < acked ? acked - sent
                                                           : sent - acked);
  float usec_per_xfer = static_cast<float>(elapsed_usec) / sent /
                        kTransfersPerIteration;
  char line[160];
  std::snprintf(line, sizeof(line), "%-8s%-8s%c%-8s%-8s%8.2fs%10.2f%11.2f%11.2f\n",
                SizeText(static_cast<uint64_t>(size)).c_str(),
                CountText(static_cast<uint64_t>(sent)).c_str(), acked_sign,
                CountText(static_cast<uint64_t>(acked_shown)).c_str(),
                SizeText(bytes).c_str(), elapsed_usec / 1000000.0,
                bytes / (1.0 * elapsed_usec), usec_per_xfer,
                1.0 / usec_per_xfer);
  return line;
}

}  // namespace pingpong

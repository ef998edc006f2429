#include "apps/pingpong/out_of_band.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pingpong {
namespace {

// fi_pingpong sends these with their terminating NUL.
constexpr char kSyncQuestion[] = "q";
constexpr char kSyncAnswer[] = "a";
constexpr char kCountOk[] = "cnt ok";
constexpr size_t kCountLength = 10;  // "%ld", NUL padded
constexpr uint32_t kMaxNameLength = 1024;

// Receives a fixed string and fails unless it is `expected`.
int ExpectString(OutOfBand& channel, const char* expected, size_t size) {
  char received[16] = {};
  int ret = channel.Recv(received, size);
  if (ret) return ret;
  if (std::memcmp(received, expected, size) != 0) {
    std::fprintf(stderr, "control: expected \"%s\", got \"%.*s\"\n", expected,
                 static_cast<int>(size), received);
    return -EBADMSG;
  }
  return 0;
}

}  // namespace

int SendName(OutOfBand& channel, const EndpointName& name) {
  uint32_t length = htonl(static_cast<uint32_t>(name.bytes.size()));
  int ret = channel.Send(&length, sizeof(length));
  if (!ret) ret = channel.Send(&name.addr_format, sizeof(name.addr_format));
  if (!ret) ret = channel.Send(name.bytes.data(), name.bytes.size());
  return ret;
}

int RecvName(OutOfBand& channel, EndpointName& name) {
  uint32_t length = 0;
  int ret = channel.Recv(&length, sizeof(length));
  if (ret) return ret;
  length = ntohl(length);
  if (length == 0 || length > kMaxNameLength) {
    std::fprintf(stderr, "control: bad endpoint name length %u\n", length);
    return -EBADMSG;
  }
  ret = channel.Recv(&name.addr_format, sizeof(name.addr_format));
  if (ret) return ret;
  name.bytes.resize(length);
  return channel.Recv(name.bytes.data(), length);
}

int Sync(OutOfBand& channel, bool is_client) {
  if (is_client) {
    int ret = channel.Send(kSyncQuestion, sizeof(kSyncQuestion));
    return ret ? ret : ExpectString(channel, kSyncAnswer, sizeof(kSyncAnswer));
  }
  int ret = ExpectString(channel, kSyncQuestion, sizeof(kSyncQuestion));
  return ret ? ret : channel.Send(kSyncAnswer, sizeof(kSyncAnswer));
}

int ExchangeAckCount(OutOfBand& channel, bool is_client, long& ack_count) {
  char count[kCountLength + 1] = {};
  if (is_client) {
    std::snprintf(count, sizeof(count), "%ld", ack_count);
    int ret = channel.Send(count, kCountLength);
    return ret ? ret : ExpectString(channel, kCountOk, sizeof(kCountOk));
  }
  int ret = channel.Recv(count, kCountLength);
  if (ret) return ret;
  char* end = nullptr;
  ack_count = std::strtol(count, &end, 10);
  if (end == count || *end != '\0' || ack_count < 0) {
    std::fprintf(stderr, "control: bad count \"%s\"\n", count);
    return -EBADMSG;
  }
  return channel.Send(kCountOk, sizeof(kCountOk));
}

}  // namespace pingpong

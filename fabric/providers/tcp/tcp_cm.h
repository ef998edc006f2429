// File: fabric/providers/tcp/tcp_cm.h
//
// The connection handshake of tcp MSG endpoints: the client sends a
// kConnRequest with the application's connection data, the server answers
// kAccept or kReject with its own. Each message is a 12-byte CmHeader, the
// sender's authorization key (fi_domain(3) auth_key: up to kMaxAuthKey
// bytes; endpoints with different keys do not connect), then up to
// kMaxCmData bytes of data. The magic number doubles as a byte-order check:
// a peer of the other byte order (or not one of ours) is refused.
#ifndef FABRIC_PROVIDERS_TCP_TCP_CM_H_
#define FABRIC_PROVIDERS_TCP_TCP_CM_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace fabric {
namespace tcp {

// FI_OPT_CM_DATA_SIZE: the most connection data fi_connect, fi_accept and
// fi_reject carry.
constexpr size_t kMaxCmData = 256;
constexpr size_t kMaxAuthKey = 64;

enum class CmType : uint8_t { kConnRequest = 1, kAccept = 2, kReject = 3 };

struct CmHeader {
  uint32_t magic;
  uint8_t version;
  uint8_t type;
  uint16_t data_len;
  uint16_t key_len;
  uint16_t reserved;
};
static_assert(sizeof(CmHeader) == 12, "part of the wire format");

// Sends one handshake message on a connected socket. The socket is fresh,
// so its buffer takes the few hundred bytes at once; anything else is an
// error (FI_EIO / the socket's errno).
absl::Status SendCm(int fd, CmType type, const std::string& key,
                    const void* data, size_t len);

// Reads one handshake message from a non-blocking socket across calls,
// never reading past its end (what follows belongs to the data phase).
class CmReader {
 public:
  enum Result { kPending, kDone, kFailed };
  Result Read(int fd);

  CmType type() const { return static_cast<CmType>(header_.type); }
  const std::vector<char>& data() const { return data_; }
  std::string key() const { return std::string(key_.begin(), key_.end()); }
  const absl::Status& error() const { return error_; }

 private:
  Result Fail(absl::Status status);
  // Reads into buf until *done reaches want.
  Result ReadSome(int fd, char* buf, size_t want, size_t* done);

  CmHeader header_ = {};
  size_t header_read_ = 0;
  std::vector<char> key_;
  size_t key_read_ = 0;
  std::vector<char> data_;
  size_t data_read_ = 0;
  absl::Status error_;
};

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_CM_H_

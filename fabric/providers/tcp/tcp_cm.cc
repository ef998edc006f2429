#include "fabric/providers/tcp/tcp_cm.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace tcp {
namespace {

constexpr uint32_t kMagic = 0x4f464954;  // "OFIT"
constexpr uint8_t kVersion = 1;

}  // namespace

absl::Status SendCm(int fd, CmType type, const std::string& key,
                    const void* data, size_t len) {
  if (key.size() > kMaxAuthKey) {
    return FiError(FI_EINVAL, absl::StrCat("an authorization key of ",
                                           key.size(), " bytes"));
  }
  if (len > kMaxCmData) {
    return FiError(FI_EINVAL, absl::StrCat("connection data of ", len,
                                           " bytes; the limit is ",
                                           kMaxCmData));
  }
  CmHeader header = {kMagic,
                     kVersion,
                     static_cast<uint8_t>(type),
                     static_cast<uint16_t>(len),
                     static_cast<uint16_t>(key.size()),
                     0};
  iovec iov[3] = {{&header, sizeof(header)},
                  {const_cast<char*>(key.data()), key.size()},
                  {const_cast<void*>(data), len}};
  msghdr msg = {};
  msg.msg_iov = iov;
  msg.msg_iovlen = 3;
  ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (sent < 0) {
    return FiError(errno == EPIPE ? FI_ECONNRESET : errno,
                   absl::StrCat("sending the handshake: ", strerror(errno)));
  }
  if (static_cast<size_t>(sent) != sizeof(header) + key.size() + len) {
    return FiError(FI_EIO, "the handshake did not fit the socket buffer");
  }
  return absl::OkStatus();
}

CmReader::Result CmReader::Fail(absl::Status status) {
  error_ = std::move(status);
  return kFailed;
}

CmReader::Result CmReader::ReadSome(int fd, char* buf, size_t want,
                                    size_t* done) {
  while (*done < want) {
    ssize_t n = recv(fd, buf + *done, want - *done, MSG_DONTWAIT);
    if (n == 0) {
      return Fail(FiError(FI_ECONNRESET, "peer closed during the handshake"));
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return kPending;
      return Fail(FiError(errno, absl::StrCat("handshake: ", strerror(errno))));
    }
    *done += n;
  }
  return kDone;
}

CmReader::Result CmReader::Read(int fd) {
  if (!error_.ok()) return kFailed;
  if (header_read_ < sizeof(header_)) {
    Result result = ReadSome(fd, reinterpret_cast<char*>(&header_),
                             sizeof(header_), &header_read_);
    if (result != kDone) return result;
    if (header_.magic != kMagic || header_.version != kVersion) {
      return Fail(FiError(FI_EIO, "handshake from a peer that is not a "
                                  "tcp endpoint of this library (or of "
                                  "another byte order or version)"));
    }
    if (header_.type < static_cast<uint8_t>(CmType::kConnRequest) ||
        header_.type > static_cast<uint8_t>(CmType::kReject) ||
        header_.data_len > kMaxCmData || header_.key_len > kMaxAuthKey) {
      return Fail(FiError(FI_EIO,
                          absl::StrCat("malformed handshake: type ",
                                       header_.type, ", a key of ",
                                       header_.key_len, " bytes, ",
                                       header_.data_len, " bytes of data")));
    }
    key_.resize(header_.key_len);
    data_.resize(header_.data_len);
  }
  Result result = ReadSome(fd, key_.data(), key_.size(), &key_read_);
  if (result != kDone) return result;
  return ReadSome(fd, data_.data(), data_.size(), &data_read_);
}

}  // namespace tcp
}  // namespace fabric

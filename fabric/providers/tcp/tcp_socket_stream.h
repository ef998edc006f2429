// File: fabric/providers/tcp/tcp_socket_stream.h
//
// The byte stream of a tcp connection: a connected, non-blocking socket.
#ifndef FABRIC_PROVIDERS_TCP_TCP_SOCKET_STREAM_H_
#define FABRIC_PROVIDERS_TCP_TCP_SOCKET_STREAM_H_

#include <sys/types.h>
#include <sys/uio.h>

#include "fabric/providers/stream/byte_stream.h"

namespace fabric {
namespace tcp {

// A connected, non-blocking socket; closed on destruction.
class SocketStream : public stream::ByteStream {
 public:
  explicit SocketStream(int fd) : fd_(fd) {}
  ~SocketStream() override;
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;

  ssize_t Write(const iovec* iov, size_t count) override;
  ssize_t Read(const iovec* iov, size_t count) override;
  void Shutdown() override;
  int fd() const override { return fd_; }
  void AcknowledgeNow() override;

 private:
  const int fd_;
};

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_SOCKET_STREAM_H_

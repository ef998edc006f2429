// The out-of-band channel as fi_pingpong makes it: one TCP connection from
// the client to the server's control port.
#ifndef APPS_PINGPONG_TCP_CONTROL_H_
#define APPS_PINGPONG_TCP_CONTROL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "apps/pingpong/out_of_band.h"

namespace pingpong {

class TcpControl : public OutOfBand {
 public:
  // Server: listens on `port` (all addresses) and accepts one client. A
  // receive on the channel fails after `timeout_s` seconds without data
  // (a peer that stops answering fails the run instead of hanging it).
  static std::unique_ptr<TcpControl> Accept(uint16_t port, bool ipv6,
                                            int timeout_s);
  // Client: connects to `host`:`port`, retrying for a few seconds while the
  // server is not listening yet; binds to `src_port` when it is not 0.
  static std::unique_ptr<TcpControl> Connect(const std::string& host,
                                             uint16_t port, uint16_t src_port,
                                             bool ipv6, int timeout_s);
  ~TcpControl() override;

  int Send(const void* data, size_t size) override;
  int Recv(void* data, size_t size) override;

 private:
  explicit TcpControl(int fd) : fd_(fd) {}
  // Owns a connected socket, with a receive timeout set on it.
  static std::unique_ptr<TcpControl> FromSocket(int fd, int timeout_s);
  int fd_;
};

}  // namespace pingpong

#endif  // APPS_PINGPONG_TCP_CONTROL_H_

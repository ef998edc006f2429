#include "apps/pingpong/tcp_control.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace pingpong {
namespace {

constexpr auto kConnectPatience = std::chrono::seconds(10);

int ReportErrno(const char* call) {
  int error = errno;
  std::fprintf(stderr, "control: %s: %s\n", call, std::strerror(error));
  return -error;
}

}  // namespace

std::unique_ptr<TcpControl> TcpControl::FromSocket(int fd, int timeout_s) {
  const timeval timeout = {timeout_s, 0};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) !=
      0) {
    ReportErrno("setsockopt(SO_RCVTIMEO)");
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<TcpControl>(new TcpControl(fd));
}

std::unique_ptr<TcpControl> TcpControl::Accept(uint16_t port, bool ipv6,
                                               int timeout_s) {
  int listener = socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return ReportErrno("socket"), nullptr;
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage address = {};
  socklen_t length;
  if (ipv6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&address);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    in6->sin6_addr = in6addr_any;
    length = sizeof(*in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&address);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    length = sizeof(*in);
  }
  int fd = -1;
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0) {
    ReportErrno("bind");
  } else if (listen(listener, 1) != 0) {
    ReportErrno("listen");
  } else if ((fd = accept(listener, nullptr, nullptr)) < 0) {
    ReportErrno("accept");
  }
  close(listener);
  return fd < 0 ? nullptr : FromSocket(fd, timeout_s);
}

std::unique_ptr<TcpControl> TcpControl::Connect(const std::string& host,
                                                uint16_t port,
                                                uint16_t src_port, bool ipv6,
                                                int timeout_s) {
  addrinfo hints = {};
  hints.ai_family = ipv6 ? AF_INET6 : AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* results = nullptr;
  int ret = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                        &results);
  if (ret != 0) {
    std::fprintf(stderr, "control: getaddrinfo(%s): %s\n", host.c_str(),
                 gai_strerror(ret));
    return nullptr;
  }
  auto deadline = std::chrono::steady_clock::now() + kConnectPatience;
  int fd = -1;
  while (fd < 0) {
    fd = socket(results->ai_family, SOCK_STREAM, 0);
    if (fd < 0) break;
    if (src_port != 0) {
      sockaddr_storage local = {};
      local.ss_family = static_cast<sa_family_t>(results->ai_family);
      // sin_port and sin6_port sit at the same offset.
      reinterpret_cast<sockaddr_in*>(&local)->sin_port = htons(src_port);
      if (bind(fd, reinterpret_cast<sockaddr*>(&local),
               results->ai_addrlen) != 0) {
        ReportErrno("bind");
        close(fd);
        fd = -1;
        break;
      }
    }
    if (connect(fd, results->ai_addr, results->ai_addrlen) == 0) break;
    int error = errno;
    close(fd);
    fd = -1;
    // The server may still be starting: retry a refused connection.
    if (error != ECONNREFUSED || std::chrono::steady_clock::now() > deadline) {
      errno = error;
      ReportErrno("connect");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  freeaddrinfo(results);
  return fd < 0 ? nullptr : FromSocket(fd, timeout_s);
}

TcpControl::~TcpControl() { close(fd_); }

int TcpControl::Send(const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t sent = send(fd_, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return ReportErrno("send");
    bytes += sent;
    size -= static_cast<size_t>(sent);
  }
  return 0;
}

int TcpControl::Recv(void* data, size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    ssize_t received = recv(fd_, bytes, size, 0);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0) return ReportErrno("recv");
    if (received == 0) {
      std::fprintf(stderr, "control: the peer closed the connection\n");
      return -ECONNABORTED;
    }
    bytes += received;
    size -= static_cast<size_t>(received);
  }
  return 0;
}

}  // namespace pingpong

#include "fabric/providers/shm/shm_doorbell.h"

#include <errno.h>
#include <rdma/fi_errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace shm {
namespace {

// The abstract address of `name`: a NUL, then the name (no terminator).
socklen_t AbstractAddress(const std::string& name, sockaddr_un* address) {
  *address = {};
  address->sun_family = AF_UNIX;
  size_t len = std::min(name.size(), sizeof(address->sun_path) - 1);
  memcpy(address->sun_path + 1, name.data(), len);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + len);
}

}  // namespace

absl::StatusOr<Doorbell> Doorbell::Bind(const std::string& name) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return FiError(errno, absl::StrCat("doorbell socket: ", strerror(errno)));
  }
  sockaddr_un address;
  socklen_t len = AbstractAddress(name, &address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), len) != 0) {
    int err = errno;
    close(fd);
    return FiError(err == EADDRINUSE ? FI_EADDRINUSE : err,
                   absl::StrCat("doorbell '", name, "': ", strerror(err)));
  }
  return Doorbell(fd);
}

Doorbell::Doorbell(Doorbell&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

Doorbell& Doorbell::operator=(Doorbell&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Doorbell::~Doorbell() {
  if (fd_ >= 0) close(fd_);
}

void Doorbell::Drain() {
  char byte[64];
  while (recv(fd_, byte, sizeof(byte), MSG_DONTWAIT) >= 0) {
  }
}

void Doorbell::Ring(const std::string& name) const {
  sockaddr_un address;
  socklen_t len = AbstractAddress(name, &address);
  char byte = 1;
  sendto(fd_, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
         reinterpret_cast<sockaddr*>(&address), len);
}

}  // namespace shm
}  // namespace fabric

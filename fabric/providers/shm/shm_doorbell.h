// File: fabric/providers/shm/shm_doorbell.h
//
// How a process wakes a sleeping shm endpoint of another process: a
// datagram to the endpoint's doorbell, a Unix datagram socket bound to an
// abstract name (no file to clean up; the kernel drops it with the socket).
// The endpoint's progress fd is the doorbell, so poll/epoll and the
// progress engine wake when it rings. Abstract names belong to a network
// namespace: processes that talk over shm share one.
#ifndef FABRIC_PROVIDERS_SHM_SHM_DOORBELL_H_
#define FABRIC_PROVIDERS_SHM_SHM_DOORBELL_H_

#include <string>

#include "absl/status/statusor.h"

namespace fabric {
namespace shm {

class Doorbell {
 public:
  // Binds the doorbell named `name` (FI_EADDRINUSE when another has it).
  static absl::StatusOr<Doorbell> Bind(const std::string& name);

  Doorbell(Doorbell&& other) noexcept;
  Doorbell& operator=(Doorbell&& other) noexcept;
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;
  ~Doorbell();

  // Readable while rings wait to be taken.
  int fd() const { return fd_; }
  // Takes every ring that waits.
  void Drain();
  // Rings the doorbell named `name`. A doorbell that is gone, or already
  // full of rings, needs no more: both are ignored.
  void Ring(const std::string& name) const;

 private:
  explicit Doorbell(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_DOORBELL_H_

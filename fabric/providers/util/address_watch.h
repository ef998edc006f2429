// File: fabric/providers/util/address_watch.h
//
// Tells whether the kernel has reported a change to network links or IP
// addresses, through a netlink socket subscribed to those events. It lets the
// interface list be read once and reused until something changes, instead of
// dumping every address from the kernel on each fi_getinfo.
#ifndef FABRIC_PROVIDERS_UTIL_ADDRESS_WATCH_H_
#define FABRIC_PROVIDERS_UTIL_ADDRESS_WATCH_H_

#include <sys/types.h>

namespace fabric {

class AddressWatch {
 public:
  AddressWatch() = default;
  AddressWatch(const AddressWatch&) = delete;
  AddressWatch& operator=(const AddressWatch&) = delete;
  ~AddressWatch();

  // True when links or addresses may have changed since the previous call:
  // the first call, any notification, lost notifications, no socket, or a
  // fork (a child must not drain its parent's notifications, so it opens
  // its own socket). Drains what is pending; never blocks.
  bool Changed();

 private:
  bool Open();

  int fd_ = -1;
  pid_t owner_ = 0;  // the process that opened fd_
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_ADDRESS_WATCH_H_

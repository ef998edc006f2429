#include "fabric/providers/util/interfaces.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/address_watch.h"

namespace fabric {
namespace {

int PrefixLength(const sockaddr* netmask) {
  if (netmask == nullptr) return 0;
  const unsigned char* bytes;
  size_t len;
  if (netmask->sa_family == AF_INET) {
    bytes = reinterpret_cast<const unsigned char*>(
        &reinterpret_cast<const sockaddr_in*>(netmask)->sin_addr);
    len = 4;
  } else if (netmask->sa_family == AF_INET6) {
    bytes = reinterpret_cast<const unsigned char*>(
        &reinterpret_cast<const sockaddr_in6*>(netmask)->sin6_addr);
    len = 16;
  } else {
    return 0;
  }
  int bits = 0;
  for (size_t i = 0; i < len; ++i) bits += __builtin_popcount(bytes[i]);
  return bits;
}

}  // namespace

std::string NetworkName(const IpAddress& address, int prefix_length) {
  IpAddress network = address;
  network.set_scope_id(0);
  absl::Span<unsigned char> bytes = network.mutable_host_bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    int keep = std::clamp(prefix_length - static_cast<int>(i) * 8, 0, 8);
    bytes[i] &= static_cast<unsigned char>(0xff00 >> keep);
  }
  return absl::StrCat(network.HostString(), "/", prefix_length);
}

namespace {

// Every address of every interface that is up, in the documented order.
absl::StatusOr<std::vector<IpInterface>> ReadInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return FiError(FI_EOTHER,
                   absl::StrCat("getifaddrs failed: ", strerror(errno)));
  }
  std::vector<IpInterface> interfaces;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    absl::StatusOr<IpAddress> address = IpAddress::FromSockaddr(
        ifa->ifa_addr, family == AF_INET ? sizeof(sockaddr_in)
                                         : sizeof(sockaddr_in6));
    if (!address.ok()) continue;
    IpInterface entry;
    entry.name = ifa->ifa_name;
    entry.address = *address;
    entry.address.set_port(0);
    entry.prefix_length = PrefixLength(ifa->ifa_netmask);
    entry.network = NetworkName(entry.address, entry.prefix_length);
    entry.loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    interfaces.push_back(std::move(entry));
  }
  freeifaddrs(list);
  // Sort key: non-loopback first, then the kernel's interface order, then
  // IPv4 before IPv6.
  std::vector<std::string> order;
  for (const IpInterface& entry : interfaces) {
    if (std::find(order.begin(), order.end(), entry.name) == order.end()) {
      order.push_back(entry.name);
    }
  }
  auto key = [&order](const IpInterface& entry) {
    size_t position =
        std::find(order.begin(), order.end(), entry.name) - order.begin();
    return std::make_tuple(entry.loopback, position,
                           entry.address.family() != AF_INET);
  };
  std::stable_sort(interfaces.begin(), interfaces.end(),
                   [&key](const IpInterface& a, const IpInterface& b) {
                     return key(a) < key(b);
                   });
  return interfaces;
}

}  // namespace

absl::StatusOr<std::vector<IpInterface>> ListIpInterfaces(
    const std::string& only) {
  // The list is read from the kernel again only after it reports a change.
  static std::mutex mu;
  static AddressWatch* watch = new AddressWatch();
  static auto* cached = new absl::StatusOr<std::vector<IpInterface>>(
      FiError(FI_EAGAIN, "interfaces not read yet"));
  std::vector<IpInterface> interfaces;
  {
    std::lock_guard<std::mutex> lock(mu);
    // Asked before reading, so that a change during the read is seen next
    // time.
    if (watch->Changed() || !cached->ok()) *cached = ReadInterfaces();
    if (!cached->ok()) return cached->status();
    interfaces = **cached;
  }
  if (only.empty()) return interfaces;
  std::vector<std::string> wanted = absl::StrSplit(only, ',', absl::SkipEmpty());
  interfaces.erase(
      std::remove_if(interfaces.begin(), interfaces.end(),
                     [&wanted](const IpInterface& entry) {
                       return std::find(wanted.begin(), wanted.end(),
                                        entry.name) == wanted.end();
                     }),
      interfaces.end());
  return interfaces;
}

}  // namespace fabric

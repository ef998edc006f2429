#include "apps/common/net.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <rdma/fi_cm.h>
#include <string.h>

#include "apps/common/check.h"

namespace apps {

sockaddr_in ResolveIPv4(const std::string& host, uint16_t port) {
  addrinfo hints = {};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0) Fail("%s: %s", host.c_str(), gai_strerror(rc));
  sockaddr_in addr;
  memcpy(&addr, found->ai_addr, sizeof(addr));
  freeaddrinfo(found);
  addr.sin_port = htons(port);
  return addr;
}

std::string ToString(const sockaddr_in& addr) {
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr.sin_addr, text, sizeof(text));
  return std::string(text) + ":" + std::to_string(ntohs(addr.sin_port));
}

sockaddr_in GetName(fid_t object) {
  sockaddr_in name = {};
  size_t len = sizeof(name);
  FI_CHECK(fi_getname(object, &name, &len));
  if (len != sizeof(name) || name.sin_family != AF_INET) {
    Fail("fi_getname: not an IPv4 address (%zu bytes)", len);
  }
  return name;
}

}  // namespace apps

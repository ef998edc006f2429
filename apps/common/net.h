// File: apps/common/net.h
//
// IPv4 socket addresses (FI_SOCKADDR_IN), the examples' address format.
#ifndef APPS_COMMON_NET_H_
#define APPS_COMMON_NET_H_

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <stdint.h>

#include <string>

namespace apps {

// `host` (a name or dotted address) and `port` as a sockaddr_in; exits
// with a message when the name does not resolve.
sockaddr_in ResolveIPv4(const std::string& host, uint16_t port);

// "127.0.0.1:7471".
std::string ToString(const sockaddr_in& addr);

// fi_getname of an endpoint or passive endpoint, checked to be an IPv4
// address.
sockaddr_in GetName(fid_t object);

}  // namespace apps

#endif  // APPS_COMMON_NET_H_

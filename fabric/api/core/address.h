// File: fabric/api/core/address.h
//
// IP socket addresses as fi_getinfo and the IP providers see them: parsing of
// FI_ADDR_STR strings (the URI form of fi_getinfo(3)), name resolution of
// node/service, validation of addresses supplied by the application, and
// formatting back to FI_ADDR_STR.
//
//   address_format[://[node][:[service][/[field3]...][?[key=value][&k2=v2]...]]]
//
//   absl::StatusOr<AddrStr> uri = ParseAddrStr("fi_sockaddr_in://10.31.6.12:7471");
//   // uri->format == "fi_sockaddr_in", uri->node == "10.31.6.12", uri->service == "7471"
#ifndef FABRIC_API_CORE_ADDRESS_H_
#define FABRIC_API_CORE_ADDRESS_H_

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "absl/strings/string_view.h"

namespace fabric {

// An IPv4 or IPv6 socket address.
class IpAddress {
 public:
  IpAddress() = default;
  // `len` must match the family of `sa` (checked by FromSockaddr).
  static absl::StatusOr<IpAddress> FromSockaddr(const sockaddr* sa,
                                                size_t len);

  int family() const { return storage_.ss_family; }
  socklen_t length() const;
  const sockaddr* sockaddr_ptr() const {
    return reinterpret_cast<const sockaddr*>(&storage_);
  }
  uint16_t port() const;
  void set_port(uint16_t port);
  // True for 0.0.0.0 and ::.
  bool IsWildcard() const;
  // Same family and address bytes (ports and scope ignored).
  bool SameHost(const IpAddress& other) const;
  // "192.0.2.1" or "fe80::1".
  std::string HostString() const;
  // The host address in network order: 4 bytes (IPv4) or 16 (IPv6).
  absl::Span<unsigned char> mutable_host_bytes();
  // The IPv6 scope (interface index); ignored for IPv4.
  void set_scope_id(uint32_t scope_id);

 private:
  sockaddr_storage storage_ = {};
};

// The parts of an FI_ADDR_STR string.
struct AddrStr {
  std::string format;   // "fi_sockaddr_in", "fi_sockaddr_in6", "fi_sockaddr", ...
  std::string node;     // host, without IPv6 brackets; may be empty
  std::string service;  // port; may be empty
  std::vector<std::string> fields;                            // "/field3/..."
  std::vector<std::pair<std::string, std::string>> query;    // "?k=v&k2=v2"
};

// True when `node` is written in FI_ADDR_STR form ("<format>://..."), which
// fi_getinfo accepts as node with a NULL service.
bool LooksLikeAddrStr(absl::string_view node);

// Parses an FI_ADDR_STR string; malformed input is an FI_EINVAL status that
// says what is wrong.
absl::StatusOr<AddrStr> ParseAddrStr(absl::string_view text);

// Checks `uri`, parsed from `text` and naming an IP format (fi_sockaddr,
// fi_sockaddr_in, fi_sockaddr_in6), as an IP address: the node a numeric
// address of the format's family (IPv6 in brackets), the service, when
// given, a decimal port of at most 65535, no path fields after it (a
// ?key=value query is allowed, and means nothing for IP). FI_EINVAL status
// saying what is wrong otherwise.
absl::Status CheckIpAddrStr(const AddrStr& uri, absl::string_view text);

// The FI_* address format named by an FI_ADDR_STR prefix ("fi_sockaddr_in" ->
// FI_SOCKADDR_IN), or FI_FORMAT_UNSPEC when unknown.
uint32_t AddrFormatFromPrefix(absl::string_view prefix);

// Resolves `node`/`service` (either may be null) to IP addresses of `family`
// (AF_UNSPEC for both). `numeric_host` forbids name lookups (FI_NUMERICHOST);
// `passive` asks for addresses to bind to (FI_SOURCE). FI_ENODATA status when
// nothing resolves, FI_EINVAL for malformed input.
absl::StatusOr<std::vector<IpAddress>> ResolveIp(const char* node,
                                                 const char* service,
                                                 int family, bool numeric_host,
                                                 bool passive);

// An address the application supplied with `addr_format` (FI_SOCKADDR,
// FI_SOCKADDR_IN, FI_SOCKADDR_IN6 or FI_ADDR_STR), validated for length and
// family.
absl::StatusOr<IpAddress> IpFromUser(uint32_t addr_format, const void* addr,
                                     size_t len);

// The wildcard address (0.0.0.0 or ::), port 0, of an IP `addr_format`:
// IPv6 for FI_SOCKADDR_IN6, IPv4 for FI_SOCKADDR_IN, FI_SOCKADDR,
// FI_ADDR_STR and FI_FORMAT_UNSPEC; FI_EINVAL status for other formats.
absl::StatusOr<IpAddress> WildcardAddress(uint32_t addr_format);

// "fi_sockaddr_in://192.0.2.1:7471" or "fi_sockaddr_in6://[fe80::1]:7471".
std::string FormatAddrStr(const IpAddress& address);

}  // namespace fabric

#endif  // FABRIC_API_CORE_ADDRESS_H_

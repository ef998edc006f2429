#include "fabric/api/core/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

// Longest host name getaddrinfo accepts (NI_MAXHOST) and longest service.
constexpr size_t kMaxNodeLength = 1025;
constexpr size_t kMaxServiceLength = 32;

struct FormatPrefix {
  const char* prefix;
  uint32_t format;
};
constexpr FormatPrefix kFormatPrefixes[] = {
    {"fi_sockaddr_in6", FI_SOCKADDR_IN6}, {"fi_sockaddr_in", FI_SOCKADDR_IN},
    {"fi_sockaddr_ib", FI_SOCKADDR_IB},   {"fi_sockaddr", FI_SOCKADDR},
    {"fi_addr_psmx2", FI_ADDR_PSMX2},     {"fi_addr_psmx3", FI_ADDR_PSMX3},
    {"fi_addr_psmx", FI_ADDR_PSMX},       {"fi_addr_gni", FI_ADDR_GNI},
    {"fi_addr_bgq", FI_ADDR_BGQ},         {"fi_addr_mlx", FI_ADDR_MLX},
    {"fi_addr_ib_ud", FI_ADDR_IB_UD},     {"fi_addr_efa", FI_ADDR_EFA},
    {"fi_addr_opx", FI_ADDR_OPX},         {"fi_addr_cxi", FI_ADDR_CXI},
    {"fi_addr_str", FI_ADDR_STR},
};

absl::Status ParsePath(absl::string_view rest, AddrStr* out) {
  // rest is everything after "[node][:service]": "/f3/f4?k=v&k2=v2".
  absl::string_view query;
  size_t question = rest.find('?');
  if (question != absl::string_view::npos) {
    query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  if (!rest.empty()) {
    for (absl::string_view field :
         absl::StrSplit(rest.substr(1), '/')) {
      out->fields.emplace_back(field);
    }
  }
  if (question == absl::string_view::npos) return absl::OkStatus();
  if (query.empty()) return absl::OkStatus();
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    size_t eq = pair.find('=');
    if (pair.empty() || eq == 0 || eq == absl::string_view::npos) {
      return FiError(FI_EINVAL,
                     absl::StrCat("malformed query '", pair,
                                  "' in address: want key=value"));
    }
    out->query.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<IpAddress> IpAddress::FromSockaddr(const sockaddr* sa,
                                                  size_t len) {
  if (sa == nullptr) return FiError(FI_EINVAL, "address is NULL");
  if (len < sizeof(sa_family_t)) {
    return FiError(FI_EINVAL, absl::StrCat("address length ", len,
                                           " is too short for a sockaddr"));
  }
  size_t want;
  switch (sa->sa_family) {
    case AF_INET:
      want = sizeof(sockaddr_in);
      break;
    case AF_INET6:
      want = sizeof(sockaddr_in6);
      break;
    default:
      return FiError(FI_EINVAL, absl::StrCat("address family ", sa->sa_family,
                                             " is not AF_INET or AF_INET6"));
  }
  if (len < want) {
    return FiError(FI_EINVAL, absl::StrCat("address length ", len,
                                           " is shorter than ", want));
  }
  IpAddress address;
  memcpy(&address.storage_, sa, want);
  return address;
}

socklen_t IpAddress::length() const {
  switch (family()) {
    case AF_INET:
      return sizeof(sockaddr_in);
    case AF_INET6:
      return sizeof(sockaddr_in6);
    default:
      return 0;
  }
}

uint16_t IpAddress::port() const {
  if (family() == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  }
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

void IpAddress::set_port(uint16_t port) {
  if (family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  } else if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
  }
}

absl::Span<unsigned char> IpAddress::mutable_host_bytes() {
  if (family() == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage_);
    return {reinterpret_cast<unsigned char*>(&in->sin_addr), 4};
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage_);
  return {reinterpret_cast<unsigned char*>(&in6->sin6_addr), 16};
}

void IpAddress::set_scope_id(uint32_t scope_id) {
  if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_scope_id = scope_id;
  }
}

bool IpAddress::IsWildcard() const {
  if (family() == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr ==
           htonl(INADDR_ANY);
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_UNSPECIFIED(
        &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  }
  return false;
}

bool IpAddress::SameHost(const IpAddress& other) const {
  if (family() != other.family()) return false;
  if (family() == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&other.storage_)
               ->sin_addr.s_addr;
  }
  if (family() == AF_INET6) {
    return memcmp(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
                  &reinterpret_cast<const sockaddr_in6*>(&other.storage_)
                       ->sin6_addr,
                  sizeof(in6_addr)) == 0;
  }
  return false;
}

std::string IpAddress::HostString() const {
  char text[INET6_ADDRSTRLEN] = "";
  if (family() == AF_INET) {
    inet_ntop(AF_INET,
              &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, text,
              sizeof(text));
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
              text, sizeof(text));
  }
  return text;
}

bool LooksLikeAddrStr(absl::string_view node) {
  return node.find("://") != absl::string_view::npos;
}

uint32_t AddrFormatFromPrefix(absl::string_view prefix) {
  for (const FormatPrefix& entry : kFormatPrefixes) {
    if (prefix == entry.prefix) return entry.format;
  }
  return FI_FORMAT_UNSPEC;
}

absl::StatusOr<AddrStr> ParseAddrStr(absl::string_view text) {
  AddrStr out;
  size_t scheme_end = text.find("://");
  if (scheme_end == absl::string_view::npos) {
    if (AddrFormatFromPrefix(text) == FI_FORMAT_UNSPEC) {
      return FiError(FI_EINVAL, absl::StrCat("'", text,
                                             "' is not an FI_ADDR_STR address"));
    }
    out.format = std::string(text);
    return out;
  }
  out.format = std::string(text.substr(0, scheme_end));
  if (AddrFormatFromPrefix(out.format) == FI_FORMAT_UNSPEC) {
    return FiError(FI_EINVAL, absl::StrCat("unknown address format '",
                                           out.format, "' in '", text, "'"));
  }
  absl::string_view rest = text.substr(scheme_end + 3);
  absl::string_view node;
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return FiError(FI_EINVAL,
                     absl::StrCat("unterminated '[' in address '", text, "'"));
    }
    node = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
  } else {
    size_t end = rest.find_first_of(":/?");
    node = rest.substr(0, end);
    rest = end == absl::string_view::npos ? absl::string_view()
                                          : rest.substr(end);
  }
  out.node = std::string(node);
  if (!rest.empty() && rest.front() == ':') {
    size_t end = rest.find_first_of("/?");
    absl::string_view service = rest.substr(1, end == absl::string_view::npos
                                                   ? absl::string_view::npos
                                                   : end - 1);
    out.service = std::string(service);
    rest = end == absl::string_view::npos ? absl::string_view()
                                          : rest.substr(end);
  }
  if (!rest.empty() && rest.front() != '/' && rest.front() != '?') {
    return FiError(FI_EINVAL, absl::StrCat("unexpected '", rest,
                                           "' in address '", text, "'"));
  }
  FABRIC_RETURN_IF_ERROR(ParsePath(rest, &out));
  return out;
}

namespace {

// A decimal port: 1 to 5 digits, at most 65535 (getaddrinfo would take
// "99999" and keep its low 16 bits).
bool DecimalPort(absl::string_view service) {
  if (service.empty() || service.size() > 5) return false;
  uint32_t port = 0;
  for (char c : service) {
    if (c < '0' || c > '9') return false;
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  return port <= 65535;
}

bool AllDigits(absl::string_view text) {
  return !text.empty() &&
         text.find_first_not_of("0123456789") == absl::string_view::npos;
}

}  // namespace

absl::Status CheckIpAddrStr(const AddrStr& uri, absl::string_view text) {
  auto invalid = [text](absl::string_view what) {
    return FiError(FI_EINVAL, absl::StrCat("'", text, "': ", what));
  };
  uint32_t format = AddrFormatFromPrefix(uri.format);
  if (uri.node.empty()) return invalid("no host address");
  in_addr v4;
  in6_addr v6;
  bool is_v4 = inet_pton(AF_INET, uri.node.c_str(), &v4) == 1;
  // An IPv6 host may carry a zone ("fe80::1%eth0").
  std::string v6_host = uri.node.substr(0, uri.node.find('%'));
  bool is_v6 = inet_pton(AF_INET6, v6_host.c_str(), &v6) == 1;
  if (format == FI_SOCKADDR_IN && !is_v4) {
    return invalid("the host is not a numeric IPv4 address");
  }
  if (format == FI_SOCKADDR_IN6 && !is_v6) {
    return invalid("the host is not a numeric IPv6 address");
  }
  if (!is_v4 && !is_v6) return invalid("the host is not a numeric address");
  size_t host = text.find("://") + 3;
  if (is_v6 && (host >= text.size() || text[host] != '[')) {
    return invalid("an IPv6 host is written in brackets");
  }
  // What follows the host: ':' and the port, then a query (fi_getinfo(3)'s
  // example has "?qos=3"; ParseAddrStr checked its key=value form, and no
  // key means anything for IP); no path fields.
  size_t after = host + uri.node.size() + (is_v6 ? 2 : 0);
  absl::string_view rest = after < text.size() ? text.substr(after) : "";
  rest = rest.substr(0, rest.find('?'));
  if (!rest.empty() &&
      (rest.front() != ':' || !DecimalPort(rest.substr(1)))) {
    return invalid("after the host only ':' and a decimal port of at most "
                   "65535 (and a ?key=value query)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<IpAddress>> ResolveIp(const char* node,
                                                 const char* service,
                                                 int family, bool numeric_host,
                                                 bool passive) {
  if (node != nullptr && strnlen(node, kMaxNodeLength + 1) > kMaxNodeLength) {
    return FiError(FI_EINVAL, "node name is longer than NI_MAXHOST");
  }
  if (service != nullptr &&
      strnlen(service, kMaxServiceLength + 1) > kMaxServiceLength) {
    return FiError(FI_EINVAL, "service is too long");
  }
  addrinfo hints = {};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = (numeric_host ? AI_NUMERICHOST : 0) |
                   (passive ? AI_PASSIVE : 0);
  if (node != nullptr && node[0] == '\0') node = nullptr;
  if (service != nullptr && service[0] == '\0') service = nullptr;
  if (service != nullptr && AllDigits(service) && !DecimalPort(service)) {
    return FiError(FI_EINVAL, absl::StrCat("service '", service,
                                           "' is not a port (0 to 65535)"));
  }
  if (node == nullptr && service == nullptr) service = "0";
  addrinfo* results = nullptr;
  int rc = getaddrinfo(node, service, &hints, &results);
  if (rc != 0) {
    return FiError(
        rc == EAI_SERVICE || rc == EAI_BADFLAGS ? FI_EINVAL : FI_ENODATA,
        absl::StrCat("cannot resolve node '", node ? node : "",
                     "' service '", service ? service : "",
                     "': ", gai_strerror(rc)));
  }
  std::vector<IpAddress> addresses;
  for (addrinfo* ai = results; ai != nullptr; ai = ai->ai_next) {
    absl::StatusOr<IpAddress> address =
        IpAddress::FromSockaddr(ai->ai_addr, ai->ai_addrlen);
    if (address.ok()) addresses.push_back(*address);
  }
  freeaddrinfo(results);
  if (addresses.empty()) {
    return FiError(FI_ENODATA, "node/service resolved to no IP address");
  }
  return addresses;
}

absl::StatusOr<IpAddress> IpFromUser(uint32_t addr_format, const void* addr,
                                     size_t len) {
  if (addr == nullptr || len == 0) {
    return FiError(FI_EINVAL, "address is NULL or has length 0");
  }
  switch (addr_format) {
    case FI_SOCKADDR:
    case FI_SOCKADDR_IN:
    case FI_SOCKADDR_IN6: {
      absl::StatusOr<IpAddress> ip =
          IpAddress::FromSockaddr(static_cast<const sockaddr*>(addr), len);
      if (!ip.ok()) return ip.status();
      if ((addr_format == FI_SOCKADDR_IN && ip->family() != AF_INET) ||
          (addr_format == FI_SOCKADDR_IN6 && ip->family() != AF_INET6)) {
        return FiError(FI_EINVAL, "address family does not match addr_format");
      }
      return ip;
    }
    case FI_ADDR_STR: {
      const char* text = static_cast<const char*>(addr);
      size_t text_len = strnlen(text, len);
      if (text_len == len) {
        return FiError(FI_EINVAL, "FI_ADDR_STR address is not NUL-terminated "
                                  "within its length");
      }
      absl::StatusOr<AddrStr> uri = ParseAddrStr(text);
      if (!uri.ok()) return uri.status();
      uint32_t format = AddrFormatFromPrefix(uri->format);
      if (format != FI_SOCKADDR && format != FI_SOCKADDR_IN &&
          format != FI_SOCKADDR_IN6) {
        return FiError(FI_EINVAL, absl::StrCat("'", text,
                                               "' is not an IP address"));
      }
      FABRIC_RETURN_IF_ERROR(CheckIpAddrStr(*uri, text));
      int family = format == FI_SOCKADDR_IN    ? AF_INET
                   : format == FI_SOCKADDR_IN6 ? AF_INET6
                                               : AF_UNSPEC;
      absl::StatusOr<std::vector<IpAddress>> resolved =
          ResolveIp(uri->node.empty() ? nullptr : uri->node.c_str(),
                    uri->service.empty() ? nullptr : uri->service.c_str(),
                    family, /*numeric_host=*/true, /*passive=*/false);
      if (!resolved.ok()) {
        // A numeric host that does not resolve (an unknown IPv6 zone) is
        // malformed, not absent.
        return FiError(FI_EINVAL, std::string(resolved.status().message()));
      }
      return resolved->front();
    }
    default:
      return FiError(FI_EINVAL, absl::StrCat("addr_format ", addr_format,
                                             " is not an IP address format"));
  }
}

std::string FormatAddrStr(const IpAddress& address) {
  if (address.family() == AF_INET6) {
    return absl::StrCat("fi_sockaddr_in6://[", address.HostString(),
                        "]:", address.port());
  }
  return absl::StrCat("fi_sockaddr_in://", address.HostString(), ":",
                      address.port());
}

absl::StatusOr<IpAddress> WildcardAddress(uint32_t addr_format) {
  switch (addr_format) {
    case FI_SOCKADDR_IN6: {
      sockaddr_in6 any = {};
      any.sin6_family = AF_INET6;
      any.sin6_addr = in6addr_any;
      return IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&any),
                                     sizeof(any));
    }
    case FI_SOCKADDR_IN:
    case FI_SOCKADDR:
    case FI_ADDR_STR:
    case FI_FORMAT_UNSPEC: {
      sockaddr_in any = {};
      any.sin_family = AF_INET;
      any.sin_addr.s_addr = htonl(INADDR_ANY);
      return IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&any),
                                     sizeof(any));
    }
    default:
      return FiError(FI_EINVAL, absl::StrCat("address format ", addr_format,
                                             " is not an IP format"));
  }
}

}  // namespace fabric

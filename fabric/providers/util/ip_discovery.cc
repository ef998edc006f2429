#include "fabric/providers/util/ip_discovery.h"

#include <rdma/fi_errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

// What the request says about addresses, resolved once.
struct AddressPlan {
  int family = AF_UNSPEC;                 // from hints->addr_format
  uint32_t output_format = FI_FORMAT_UNSPEC;  // FI_SOCKADDR / FI_ADDR_STR / native
  std::vector<IpAddress> sources;         // empty: the interface's own address
  std::optional<IpAddress> destination;
};

bool IsIpFormat(uint32_t format) {
  return format == FI_FORMAT_UNSPEC || format == FI_SOCKADDR ||
         format == FI_SOCKADDR_IN || format == FI_SOCKADDR_IN6 ||
         format == FI_ADDR_STR;
}

int FamilyOf(uint32_t format) {
  if (format == FI_SOCKADDR_IN) return AF_INET;
  if (format == FI_SOCKADDR_IN6) return AF_INET6;
  return AF_UNSPEC;
}

// The local address the kernel would use to reach `destination`, found by
// connecting a UDP socket (nothing is sent).
std::optional<IpAddress> RouteSource(const IpAddress& destination) {
  int fd = socket(destination.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  IpAddress probe = destination;
  if (probe.port() == 0) probe.set_port(9);  // connect() needs a port
  std::optional<IpAddress> local;
  sockaddr_storage name = {};
  socklen_t len = sizeof(name);
  if (connect(fd, probe.sockaddr_ptr(), probe.length()) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&name), &len) == 0) {
    absl::StatusOr<IpAddress> address =
        IpAddress::FromSockaddr(reinterpret_cast<sockaddr*>(&name), len);
    if (address.ok()) local = *address;
  }
  close(fd);
  return local;
}

absl::StatusOr<AddressPlan> PlanAddresses(const GetInfoRequest& request) {
  const fi_info* hints = request.hints;
  AddressPlan plan;
  uint32_t hint_format = hints ? hints->addr_format : uint32_t{FI_FORMAT_UNSPEC};
  plan.family = FamilyOf(hint_format);
  plan.output_format = hint_format;

  const char* node = request.node;
  const char* service = request.service;
  AddrStr uri;
  if (node != nullptr && LooksLikeAddrStr(node)) {
    absl::StatusOr<AddrStr> parsed = ParseAddrStr(node);
    if (!parsed.ok()) return parsed.status();
    uri = *std::move(parsed);
    uint32_t format = AddrFormatFromPrefix(uri.format);
    if (format != FI_SOCKADDR && format != FI_SOCKADDR_IN &&
        format != FI_SOCKADDR_IN6) {
      return FiError(FI_ENODATA, absl::StrCat("node '", node,
                                              "' is not an IP address"));
    }
    FABRIC_RETURN_IF_ERROR(CheckIpAddrStr(uri, node));
    if (plan.family == AF_UNSPEC) plan.family = FamilyOf(format);
    node = uri.node.empty() ? nullptr : uri.node.c_str();
    service = uri.service.empty() ? nullptr : uri.service.c_str();
  }
  bool numeric = (request.flags & FI_NUMERICHOST) != 0;
  bool source = (request.flags & FI_SOURCE) != 0;

  if (source && (node != nullptr || service != nullptr)) {
    absl::StatusOr<std::vector<IpAddress>> local =
        ResolveIp(node, service, plan.family, numeric, /*passive=*/true);
    if (!local.ok()) return local.status();
    plan.sources = *std::move(local);
  } else if (!source && (node != nullptr || service != nullptr)) {
    absl::StatusOr<std::vector<IpAddress>> remote =
        ResolveIp(node, service, plan.family, numeric, /*passive=*/false);
    if (!remote.ok()) return remote.status();
    plan.destination = remote->front();
  }
  if (!source && hints != nullptr && hints->src_addr != nullptr) {
    absl::StatusOr<IpAddress> src =
        IpFromUser(hints->addr_format ? hints->addr_format : uint32_t{FI_SOCKADDR},
                   hints->src_addr, hints->src_addrlen);
    if (!src.ok()) return src.status();
    plan.sources = {*src};
  }
  bool dest_from_hints =
      source || (request.node == nullptr && request.service == nullptr);
  if (dest_from_hints && hints != nullptr && hints->dest_addr != nullptr) {
    absl::StatusOr<IpAddress> dest =
        IpFromUser(hints->addr_format ? hints->addr_format : uint32_t{FI_SOCKADDR},
                   hints->dest_addr, hints->dest_addrlen);
    if (!dest.ok()) return dest.status();
    plan.destination = *dest;
  }
  return plan;
}

// The source address an interface offers under `plan`, if it matches.
std::optional<IpAddress> SourceFor(const AddressPlan& plan,
                                   const IpInterface& iface,
                                   const std::optional<IpAddress>& route) {
  if (plan.family != AF_UNSPEC && iface.address.family() != plan.family) {
    return std::nullopt;
  }
  if (plan.destination.has_value() &&
      plan.destination->family() != iface.address.family()) {
    return std::nullopt;
  }
  if (plan.sources.empty()) {
    if (route.has_value() && !route->SameHost(iface.address)) {
      return std::nullopt;
    }
    return iface.address;
  }
  for (const IpAddress& source : plan.sources) {
    if (source.family() != iface.address.family()) continue;
    if (source.IsWildcard() || source.SameHost(iface.address)) return source;
  }
  return std::nullopt;
}

absl::Status SetIpAddress(const IpAddress& address, uint32_t format,
                          void** field, size_t* len) {
  bool ok;
  if (format == FI_ADDR_STR) {
    std::string text = FormatAddrStr(address);
    ok = SetAddress(field, len, text.c_str(), text.size() + 1);
  } else {
    ok = SetAddress(field, len, address.sockaddr_ptr(), address.length());
  }
  return ok ? absl::OkStatus() : FiError(FI_ENOMEM, "out of memory");
}

absl::StatusOr<InfoPtr> MakeCandidate(const Provider& provider,
                                      const fi_info& ep_template,
                                      const IpInterface& iface,
                                      const IpAddress& source,
                                      const AddressPlan& plan) {
  InfoPtr info = DupInfo(ep_template);
  if (info == nullptr) return FiError(FI_ENOMEM, "out of memory");
  uint32_t format = plan.output_format;
  if (format == FI_FORMAT_UNSPEC || format == FI_SOCKADDR_IN ||
      format == FI_SOCKADDR_IN6) {
    format = source.family() == AF_INET ? FI_SOCKADDR_IN : FI_SOCKADDR_IN6;
  }
  info->addr_format = format;
  FABRIC_RETURN_IF_ERROR(
      SetIpAddress(source, format, &info->src_addr, &info->src_addrlen));
  if (plan.destination.has_value()) {
    FABRIC_RETURN_IF_ERROR(SetIpAddress(*plan.destination, format,
                                        &info->dest_addr,
                                        &info->dest_addrlen));
  }
  if (!SetString(&info->domain_attr->name, iface.name) ||
      !SetString(&info->fabric_attr->name, iface.network) ||
      !SetString(&info->fabric_attr->prov_name, provider.name())) {
    return FiError(FI_ENOMEM, "out of memory");
  }
  info->fabric_attr->prov_version = provider.version();
  return info;
}

}  // namespace

absl::StatusOr<InfoList> DiscoverIp(
    const Provider& provider, const GetInfoRequest& request,
    const std::vector<IpInterface>& interfaces,
    const std::vector<const fi_info*>& templates) {
  InfoList candidates;
  uint32_t hint_format =
      request.hints ? request.hints->addr_format : uint32_t{FI_FORMAT_UNSPEC};
  if (!IsIpFormat(hint_format)) {
    return FiError(FI_ENODATA, absl::StrCat("addr_format ", hint_format,
                                            " is not an IP address format"));
  }
  absl::StatusOr<AddressPlan> plan = PlanAddresses(request);
  if (!plan.ok()) return plan.status();
  std::optional<IpAddress> route;
  if (plan->destination.has_value() && plan->sources.empty()) {
    route = RouteSource(*plan->destination);
  }
  for (const IpInterface& iface : interfaces) {
    std::optional<IpAddress> source = SourceFor(*plan, iface, route);
    if (!source.has_value()) continue;
    for (const fi_info* ep_template : templates) {
      absl::StatusOr<InfoPtr> candidate =
          MakeCandidate(provider, *ep_template, iface, *source, *plan);
      if (!candidate.ok()) return candidate.status();
      candidates.Append(*std::move(candidate));
    }
  }
  if (candidates.empty()) {
    return FiError(FI_ENODATA,
                   interfaces.empty()
                       ? "no usable IP interface is up"
                       : "no interface matches the requested addresses");
  }
  return candidates;
}

}  // namespace fabric

#include "fabric/providers/util/ip_provider.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <string>

#include "absl/strings/ascii.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/fabric.h"
#include "fabric/providers/util/interfaces.h"
#include "fabric/providers/util/ip_discovery.h"
#include "fabric/providers/util/provider_setting.h"

namespace fabric {
namespace {

// FI_<PROV>_IFACE.
constexpr StringSetting kIface = {
    "iface", "every interface that is up",
    "Comma-separated list of network interfaces to use"};

}  // namespace

IpProvider::IpProvider(const char* name, uint32_t version)
    : Provider(name, version) {
  kIface.Define(*this);
}

InfoPtr IpProvider::DefaultInfo() const {
  return NamedCopy(*Templates().front());
}

absl::StatusOr<InfoList> IpProvider::Discover(
    const GetInfoRequest& request) const {
  std::string wanted = kIface.Get(*this);
  absl::StatusOr<std::vector<IpInterface>> interfaces =
      ListIpInterfaces(wanted);
  if (!interfaces.ok()) return interfaces.status();
  if (interfaces->empty() && !wanted.empty()) {
    // Said, not silent: the provider then offers nothing at all.
    FI_WARN(c_provider(), FI_LOG_CORE,
            "FI_%s_IFACE=%s names no interface that is up with an IP "
            "address: %s offers nothing\n",
            absl::AsciiStrToUpper(name()).c_str(), wanted.c_str(), name());
  }
  return DiscoverIp(*this, request, *interfaces, Templates());
}

int IpProvider::OpenFabric(const fi_fabric_attr& attr, fid_fabric** fabric,
                           void* context) const {
  absl::StatusOr<std::vector<IpInterface>> interfaces =
      ListIpInterfaces(kIface.Get(*this));
  if (!interfaces.ok()) return ToFiErrno(interfaces.status());
  for (const IpInterface& iface : *interfaces) {
    if (iface.network == attr.name) {
      return OpenUtilFabric(*this, attr, fabric, context);
    }
  }
  FI_WARN(c_provider(), FI_LOG_FABRIC, "no fabric named '%s'\n", attr.name);
  return -FI_ENODATA;
}

}  // namespace fabric

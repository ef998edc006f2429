#include "fabric/providers/verbs/verbs_devices.h"

#include <dirent.h>
#include <rdma/fi_errno.h>

#include <fstream>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fabric/api/core/status.h"
#include "fabric/providers/util/interfaces.h"
#include "fabric/providers/verbs/verbs_api.h"

namespace fabric {
namespace verbs {
namespace {

constexpr char kSysfs[] = "/sys/class/infiniband";

// The first line of `path`, or "".
std::string FirstLine(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// The names in directory `path` (not . or ..).
std::vector<std::string> Entries(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') names.emplace_back(entry->d_name);
  }
  closedir(dir);
  return names;
}

// The IP addresses of the network interface of `device`'s `port`.
std::vector<IpAddress> PortAddresses(const std::string& device, int port) {
  std::string netdev = FirstLine(
      absl::StrCat(kSysfs, "/", device, "/ports/", port, "/gid_attrs/ndevs/0"));
  std::vector<std::string> names;
  if (!netdev.empty()) {
    names.push_back(netdev);
  } else {
    names = Entries(absl::StrCat(kSysfs, "/", device, "/device/net"));
  }
  std::vector<IpAddress> addresses;
  if (names.empty()) return addresses;
  absl::StatusOr<std::vector<IpInterface>> interfaces =
      ListIpInterfaces(absl::StrJoin(names, ","));
  if (!interfaces.ok()) return addresses;
  for (const IpInterface& interface : *interfaces) {
    addresses.push_back(interface.address);
  }
  return addresses;
}

// The ports of the opened device `name`.
absl::Status DevicePorts(const VerbsApi& api, ibv_context* context,
                         const std::string& name,
                         std::vector<PortDescription>* ports) {
  PortDescription base;
  base.device = name;
  std::vector<PortDescription> found;
  if (int rc = api.query_device(context, &base.device_attr); rc != 0) {
    return FiError(FI_EIO, absl::StrCat(name, ": ibv_query_device: ", rc));
  }
  for (int number = 1; number <= base.device_attr.phys_port_cnt; ++number) {
    PortDescription port = base;
    port.port = static_cast<uint8_t>(number);
    if (int rc = api.QueryPort(context, port.port, &port.port_attr); rc != 0) {
      return FiError(FI_EIO, absl::StrCat(name, " port ", number,
                                          ": ibv_query_port: ", rc));
    }
    if (int rc = api.query_gid(context, port.port, 0, &port.gid); rc != 0) {
      return FiError(FI_EIO, absl::StrCat(name, " port ", number,
                                          ": ibv_query_gid: ", rc));
    }
    port.ip_addresses = PortAddresses(name, number);
    port.max_inline = api.MaxInlineData(context, kMaxInjectSize);
    found.push_back(std::move(port));
  }
  ports->insert(ports->end(), found.begin(), found.end());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<PortDescription>> ListPorts(
    std::vector<std::string>* skipped) {
  absl::StatusOr<const VerbsApi*> api = LoadVerbsApi();
  if (!api.ok()) return api.status();
  int count = 0;
  ibv_device** devices = (*api)->get_device_list(&count);
  std::vector<PortDescription> ports;
  if (devices == nullptr) return ports;
  for (int i = 0; i < count; ++i) {
    std::string name = (*api)->get_device_name(devices[i]);
    ibv_context* context = (*api)->open_device(devices[i]);
    absl::Status status =
        context != nullptr
            ? DevicePorts(**api, context, name, &ports)
            : FiError(FI_EIO, absl::StrCat(name, ": ibv_open_device failed"));
    if (context != nullptr) (*api)->close_device(context);
    if (!status.ok() && skipped != nullptr) {
      skipped->emplace_back(status.message());
    }
  }
  (*api)->free_device_list(devices);
  return ports;
}

}  // namespace verbs
}  // namespace fabric

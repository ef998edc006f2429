// The verbs provider on this machine: the device ports libibverbs finds
// agree with sysfs, and fi_getinfo offers MSG endpoints (and RDM endpoints
// over them) on those devices.
// Where the machine has no RDMA device (no /sys/class/infiniband, as here)
// it offers nothing, and the log says why.
#include <dirent.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <string.h>

#include <set>
#include <string>

#include "fabric/api/config/log_capture.h"
#include "fabric/providers/verbs/verbs_devices.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

// The devices sysfs lists.
std::set<std::string> SysfsDevices() {
  std::set<std::string> names;
  DIR* dir = opendir("/sys/class/infiniband");
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') names.insert(entry->d_name);
  }
  closedir(dir);
  return names;
}

TEST(VerbsDiscoveryTest, PortsAgreeWithSysfs) {
  std::vector<std::string> skipped;
  absl::StatusOr<std::vector<verbs::PortDescription>> ports =
      verbs::ListPorts(&skipped);
  if (!ports.ok()) {
    // Without libibverbs there is nothing to list, devices or not.
    EXPECT_EQ(ports.status().code(), absl::StatusCode::kNotFound)
        << ports.status();
    return;
  }
  std::set<std::string> listed;
  for (const verbs::PortDescription& port : *ports) {
    listed.insert(port.device);
    EXPECT_GE(port.port, 1);
    EXPECT_LE(port.port, port.device_attr.phys_port_cnt);
  }
  std::set<std::string> expected = SysfsDevices();
  EXPECT_EQ(listed.size() + skipped.size(), expected.size());
  for (const std::string& device : listed) {
    EXPECT_EQ(expected.count(device), 1u) << device;
  }
}

TEST(VerbsDiscoveryTest, GetinfoOffersTheDevicesOrSaysWhyNot) {
  LogCapture logs;
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("verbs");
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  const std::set<std::string> devices = SysfsDevices();
  if (devices.empty()) {
    EXPECT_EQ(rc, -FI_ENODATA);
    EXPECT_EQ(logs.Count("no RDMA devices") + logs.Count("no libibverbs"), 1);
  } else if (rc == 0) {
    for (const fi_info* i = info; i != nullptr; i = i->next) {
      EXPECT_STREQ(i->fabric_attr->prov_name, "verbs");
      // RC queue pairs, and RDM endpoints over them.
      EXPECT_EQ(i->ep_attr->protocol, i->ep_attr->type == FI_EP_MSG
                                          ? FI_PROTO_RDMA_CM_IB_RC
                                          : FI_PROTO_RXM);
      EXPECT_EQ(devices.count(i->domain_attr->name), 1u)
          << i->domain_attr->name;
      EXPECT_NE(i->src_addr, nullptr);
    }
  } else {
    // Devices, but no port ACTIVE with an address: the log says which.
    EXPECT_EQ(rc, -FI_ENODATA);
  }
  fi_freeinfo(info);
}

}  // namespace
}  // namespace fabric

// The verbs provider on this machine: the device ports libibverbs finds
// agree with sysfs, and fi_getinfo offers no verbs (its endpoints are not
// built yet), saying why in the log. Where the machine has no RDMA device
// (no /sys/class/infiniband, as here) that is what the log says.
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

TEST(VerbsDiscoveryTest, GetinfoOffersNoVerbsAndTheLogSaysWhy) {
  LogCapture logs;
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("verbs");
  fi_info* info = nullptr;
  EXPECT_EQ(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info),
            -FI_ENODATA);
  fi_freeinfo(hints);
  fi_freeinfo(info);
  int why = logs.Count("no RDMA devices") + logs.Count("no libibverbs") +
            logs.Count("verbs endpoints are not part of this build yet");
  EXPECT_EQ(why, 1);
  if (SysfsDevices().empty()) {
    EXPECT_EQ(logs.Count("verbs endpoints are not part of this build"), 0);
  }
}

}  // namespace
}  // namespace fabric

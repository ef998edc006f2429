#include "fabric/providers/verbs/verbs_provider.h"

#include <dirent.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <string>
#include <vector>

#include "fabric/providers/util/info_template.h"

namespace fabric {
namespace {

constexpr uint32_t kVerbsVersion = FI_VERSION(118, 0);
constexpr char kDeviceDir[] = "/sys/class/infiniband";

// Names of the RDMA devices the kernel exposes (empty when there are none).
std::vector<std::string> ListRdmaDevices() {
  std::vector<std::string> devices;
  DIR* dir = opendir(kDeviceDir);
  if (dir == nullptr) return devices;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') devices.emplace_back(entry->d_name);
  }
  closedir(dir);
  return devices;
}

constexpr int kVerbsMrMode =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

// What an RC queue pair offers; reported once devices are supported.
void DescribeRcEndpoint(InfoTemplate* t) {
  t->tx.msg_order = FI_ORDER_SAS;
  t->tx.comp_order = FI_ORDER_STRICT;
  t->tx.inject_size = 64;
  t->tx.size = 384;
  t->tx.rma_iov_limit = 1;
  t->rx.msg_order = FI_ORDER_SAS;
  t->rx.comp_order = FI_ORDER_STRICT;
  t->rx.size = 384;
  t->ep.type = FI_EP_MSG;
  t->ep.protocol = FI_PROTO_RDMA_CM_IB_RC;
  t->ep.protocol_version = 1;
  t->ep.max_msg_size = 1u << 30;
  t->domain.mr_mode = kVerbsMrMode;
  t->domain.mr_key_size = 4;
  t->domain.cq_data_size = 4;
  t->info.addr_format = FI_SOCKADDR_IB;
  t->SetCaps(FI_MSG | FI_RMA | FI_SEND | FI_READ | FI_WRITE,
             FI_MSG | FI_RMA | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE);
}

class VerbsProvider : public Provider {
 public:
  VerbsProvider() : Provider("verbs", kVerbsVersion) {
    DescribeRcEndpoint(&rc_);
  }

  int default_priority() const override { return 200; }

  InfoPtr DefaultInfo() const override {
    InfoPtr info = DupInfo(rc_.info);
    if (info == nullptr || !SetString(&info->fabric_attr->prov_name, name())) {
      return nullptr;
    }
    info->fabric_attr->prov_version = version();
    return info;
  }

  absl::StatusOr<InfoList> Discover(const GetInfoRequest&) const override {
    std::vector<std::string> devices = ListRdmaDevices();
    if (devices.empty()) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE,
             "no RDMA devices (%s is absent or empty); verbs reports "
             "nothing\n",
             kDeviceDir);
    } else {
      FI_LOG(c_provider(), FI_LOG_INFO, FI_LOG_CORE,
             "%zu RDMA device(s) present (first: %s), but the verbs data "
             "path is not part of this build; verbs reports nothing\n",
             devices.size(), devices.front().c_str());
    }
    return InfoList();
  }

  AttrSupport SupportFor(const fi_info&) const override {
    AttrSupport support;
    support.threading = Bit(FI_THREAD_SAFE);
    support.progress = Bit(FI_PROGRESS_AUTO);
    support.resource_mgmt = Bit(FI_RM_ENABLED);
    support.av_types = Bit(FI_AV_MAP);
    support.mr_mode_required = kVerbsMrMode;
    return support;
  }

  int OpenFabric(const fi_fabric_attr& attr, fid_fabric**,
                 void*) const override {
    FI_WARN(c_provider(), FI_LOG_FABRIC,
            "no verbs fabric named '%s' (no usable RDMA devices)\n",
            attr.name);
    return -FI_ENODATA;
  }

 private:
  InfoTemplate rc_;
};

}  // namespace

std::unique_ptr<Provider> MakeVerbsProvider() {
  return std::make_unique<VerbsProvider>();
}

}  // namespace fabric

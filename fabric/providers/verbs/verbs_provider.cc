#include "fabric/providers/verbs/verbs_provider.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include <mutex>
#include <string>
#include <vector>

#include "fabric/providers/util/info_template.h"
#include "fabric/providers/verbs/verbs_attr.h"
#include "fabric/providers/verbs/verbs_devices.h"

namespace fabric {
namespace {

constexpr uint32_t kVerbsVersion = FI_VERSION(118, 0);

class VerbsProvider : public Provider {
 public:
  VerbsProvider() : Provider("verbs", kVerbsVersion) {
    // Limits depend on the device: none here.
    verbs::DescribeRc(verbs::PortDescription(), &rc_);
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

  // Finds the device ports and what they would offer, and logs it; reports
  // none, as verbs endpoints are not part of this build yet (fi_fabric
  // would fail).
  absl::StatusOr<InfoList> Discover(const GetInfoRequest&) const override {
    // The devices are opened and queried once per process, not at every
    // fi_getinfo.
    std::call_once(listed_, [this] { ports_ = verbs::ListPorts(&skipped_); });
    const absl::StatusOr<std::vector<verbs::PortDescription>>& ports = ports_;
    if (!ports.ok()) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE,
             "no libibverbs (%s); verbs reports nothing\n",
             std::string(ports.status().message()).c_str());
      return InfoList();
    }
    for (const std::string& why : skipped_) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE, "device left out: %s\n",
             why.c_str());
    }
    if (ports->empty()) {
      FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE,
             "no RDMA devices (ibv_get_device_list found none); verbs "
             "reports nothing\n");
      return InfoList();
    }
    size_t usable = 0;
    for (const verbs::PortDescription& port : *ports) {
      absl::StatusOr<InfoList> infos = verbs::PortInfos(port, version());
      if (infos.ok()) {
        usable += infos->size();
      } else {
        FI_LOG(c_provider(), FI_LOG_DEBUG, FI_LOG_CORE, "%s\n",
               std::string(infos.status().message()).c_str());
      }
    }
    FI_INFO(c_provider(), FI_LOG_CORE,
            "%zu RDMA port(s) would offer %zu fi_info, but verbs endpoints "
            "are not part of this build yet; verbs reports nothing\n",
            ports->size(), usable);
    return InfoList();
  }

  AttrSupport SupportFor(const fi_info&) const override {
    AttrSupport support;
    support.threading = Bit(FI_THREAD_SAFE);
    support.progress = Bit(FI_PROGRESS_AUTO);
    support.resource_mgmt = Bit(FI_RM_ENABLED);
    support.av_types = Bit(FI_AV_MAP);
    support.mr_mode_required = verbs::kMrMode;
    return support;
  }

  int OpenFabric(const fi_fabric_attr& attr, fid_fabric**,
                 void*) const override {
    FI_WARN(c_provider(), FI_LOG_FABRIC,
            "no verbs fabric named '%s' (verbs endpoints are not part of "
            "this build yet)\n",
            attr.name == nullptr ? "(null)" : attr.name);
    return -FI_ENODATA;
  }

 private:
  InfoTemplate rc_;
  mutable std::once_flag listed_;
  mutable absl::StatusOr<std::vector<verbs::PortDescription>> ports_;
  mutable std::vector<std::string> skipped_;
};

}  // namespace

std::unique_ptr<Provider> MakeVerbsProvider() {
  return std::make_unique<VerbsProvider>();
}

}  // namespace fabric

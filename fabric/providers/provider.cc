#include "fabric/providers/provider.h"

#include <rdma/fi_errno.h>

namespace fabric {

Provider::Provider(const char* name, uint32_t version) : c_provider_{} {
  c_provider_.version = version;
  c_provider_.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
  c_provider_.name = name;
}

InfoPtr Provider::NamedCopy(const fi_info& info) const {
  InfoPtr copy = DupInfo(info);
  if (copy == nullptr || !SetString(&copy->fabric_attr->prov_name, name())) {
    return nullptr;
  }
  copy->fabric_attr->prov_version = version();
  return copy;
}

absl::StatusOr<std::unique_ptr<DomainResources>>
Provider::OpenDomainResources(const UtilDomain&) const {
  return nullptr;
}

int Provider::OpenEndpoint(fid_domain*, fi_info*, fid_ep**, uint64_t,
                           void*) const {
  return -FI_ENOSYS;
}

int Provider::OpenPassiveEndpoint(fid_fabric*, fi_info*, fid_pep**,
                                  void*) const {
  return -FI_ENOSYS;
}

int Provider::QueryAtomic(fid_domain*, fi_datatype, fi_op, fi_atomic_attr*,
                          uint64_t) const {
  return -FI_ENOSYS;
}

int Provider::OpenSharedRxContext(fid_domain*, fi_rx_attr*, fid_ep**,
                                  void*) const {
  return -FI_ENOSYS;
}

int Provider::OpenSharedTxContext(fid_domain*, fi_tx_attr*, fid_stx**,
                                  void*) const {
  return -FI_ENOSYS;
}

}  // namespace fabric

#include "fabric/providers/udp/udp_provider.h"

#include <rdma/fi_domain.h>

#include "fabric/providers/udp/udp_endpoint.h"
#include "fabric/providers/udp/udp_limits.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/util/ip_provider.h"

namespace fabric {
namespace {

constexpr uint32_t kUdpVersion = FI_VERSION(118, 0);

class UdpProvider : public IpProvider {
 public:
  UdpProvider() : IpProvider("udp", kUdpVersion) {
    dgram_.tx.inject_size = kUdpMaxMsgSize;
    dgram_.tx.iov_limit = kUdpIovLimit;
    dgram_.rx.iov_limit = kUdpIovLimit;
    dgram_.ep.type = FI_EP_DGRAM;
    dgram_.ep.protocol = FI_PROTO_UDP;
    dgram_.ep.max_msg_size = kUdpMaxMsgSize;
    // Registrations only name the memory of a buffer (FI_MR_LOCAL, HMEM).
    dgram_.domain.mr_cnt = 65536;
    dgram_.SetCaps(FI_MSG | FI_SEND, FI_MSG | FI_RECV | FI_SOURCE);
  }

  int default_priority() const override { return 50; }

  std::vector<const fi_info*> Templates() const override {
    return {&dgram_.info};
  }

  AttrSupport SupportFor(const fi_info&) const override {
    AttrSupport support = FullAttrSupport();
    // Not FI_MR_ENDPOINT: regions are not bound to udp endpoints.
    support.mr_mode_optional = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                               FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_HMEM;
    support.tx_op_flags = FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE |
                          FI_TRANSMIT_COMPLETE | FI_MORE;
    support.rx_op_flags = FI_COMPLETION;
    return support;
  }

  int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                   uint64_t, void* context) const override {
    return OpenUdpEndpoint(domain, info, ep, context);
  }

 private:
  InfoTemplate dgram_;
};

}  // namespace

std::unique_ptr<Provider> MakeUdpProvider() {
  return std::make_unique<UdpProvider>();
}

}  // namespace fabric

#include "fabric/providers/tcp/tcp_provider.h"

#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>

#include "fabric/api/core/enum_value.h"
#include "fabric/providers/stream/stream_attr.h"
#include "fabric/providers/stream/stream_provider.h"
#include "fabric/providers/tcp/tcp_fd_limit.h"
#include "fabric/providers/tcp/tcp_msg_ep.h"
#include "fabric/providers/tcp/tcp_rdm_ep.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/util/ip_provider.h"
#include "fabric/providers/util/provider_setting.h"

namespace fabric {
namespace {

// Version of the tcp provider: 1.18 with our own minor.
constexpr uint32_t kTcpVersion = FI_VERSION(118, 0);

// FI_TCP_SHM.
constexpr BoolSetting kLocalPath = {
    "shm", true,
    "RDM endpoints reach peers on this host through the shm provider "
    "(fi_peer(3)); 0 sends every peer over TCP"};

class TcpProvider : public stream::OnStreamEngine<IpProvider> {
 public:
  explicit TcpProvider(const Provider* shm)
      : OnStreamEngine("tcp", kTcpVersion), shm_(shm) {
    stream::DescribeStreamEndpoint(FI_EP_RDM, &rdm_);
    stream::DescribeStreamEndpoint(FI_EP_MSG, &msg_);
    kLocalPath.Define(*this);
  }

  int default_priority() const override { return 100; }

  // RDM first: the connectionless interface is what most applications want.
  std::vector<const fi_info*> Templates() const override {
    return {&rdm_.info, &msg_.info};
  }

  int OpenEndpoint(fid_domain* domain, fi_info* info, fid_ep** ep,
                   uint64_t flags, void* context) const override {
    tcp::PrepareFdBudget(c_provider());
    switch (EnumValue(info->ep_attr->type)) {
      case FI_EP_MSG:
        return tcp::OpenTcpMsgEp(domain, info, ep, context);
      case FI_EP_RDM:
        return tcp::OpenTcpRdmEp(domain, info, ep, context, LocalProvider());
      default:
        FI_WARN(c_provider(), FI_LOG_EP_CTRL,
                "fi_endpoint: tcp opens FI_EP_MSG and FI_EP_RDM endpoints\n");
        return -FI_EINVAL;
    }
  }

  int OpenPassiveEndpoint(fid_fabric* fabric, fi_info* info, fid_pep** pep,
                          void* context) const override {
    tcp::PrepareFdBudget(c_provider());
    return tcp::OpenTcpPassiveEp(fabric, info, pep, context);
  }

 private:
  // shm unless FI_TCP_SHM is 0 (or there is none).
  const Provider* LocalProvider() const {
    return kLocalPath.Get(*this) ? shm_ : nullptr;
  }

  const Provider* shm_;
  InfoTemplate rdm_;
  InfoTemplate msg_;
};

}  // namespace

std::unique_ptr<Provider> MakeTcpProvider(const Provider* shm) {
  return std::make_unique<TcpProvider>(shm);
}

}  // namespace fabric

#include "fabric/providers/tcp/tcp_provider.h"

#include "fabric/providers/tcp/tcp_attr.h"
#include "fabric/providers/util/info_template.h"
#include "fabric/providers/util/ip_provider.h"

namespace fabric {
namespace {

// Version of the tcp provider: 1.18 with our own minor.
constexpr uint32_t kTcpVersion = FI_VERSION(118, 0);

class TcpProvider : public IpProvider {
 public:
  TcpProvider() : IpProvider("tcp", kTcpVersion) {
    DescribeTcpEndpoint(FI_EP_RDM, &rdm_);
    DescribeTcpEndpoint(FI_EP_MSG, &msg_);
  }

  int default_priority() const override { return 100; }

  // RDM first: the connectionless interface is what most applications want.
  std::vector<const fi_info*> Templates() const override {
    return {&rdm_.info, &msg_.info};
  }

  AttrSupport SupportFor(const fi_info&) const override {
    return TcpAttrSupport();
  }

 private:
  InfoTemplate rdm_;
  InfoTemplate msg_;
};

}  // namespace

std::unique_ptr<Provider> MakeTcpProvider() {
  return std::make_unique<TcpProvider>();
}

}  // namespace fabric

// File: fabric/providers/util/info_template.h
//
// The attributes a provider reports for one endpoint type, held in one
// object: the fi_info and the attribute structs it points to. It starts from
// the values our providers share; a provider changes what differs.
#ifndef FABRIC_PROVIDERS_UTIL_INFO_TEMPLATE_H_
#define FABRIC_PROVIDERS_UTIL_INFO_TEMPLATE_H_

#include <rdma/fabric.h>

#include "fabric/api/core/hints.h"

namespace fabric {

struct InfoTemplate {
  InfoTemplate();
  // `info` points into this object, so it is neither copied nor moved.
  InfoTemplate(const InfoTemplate&) = delete;
  InfoTemplate& operator=(const InfoTemplate&) = delete;

  // Sets the endpoint capabilities on the transmit side, the receive side,
  // and in fi_info::caps (their union, plus the domain capabilities).
  void SetCaps(uint64_t tx_caps, uint64_t rx_caps);

  fi_tx_attr tx = {};
  fi_rx_attr rx = {};
  fi_ep_attr ep = {};
  fi_domain_attr domain = {};
  fi_fabric_attr fabric = {};
  fi_info info = {};
};

// Every threading model, both progress models, both resource-management
// modes and both AV types: what a provider with its own locking and progress
// engine accepts. Providers narrow it where they must.
AttrSupport FullAttrSupport();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_INFO_TEMPLATE_H_

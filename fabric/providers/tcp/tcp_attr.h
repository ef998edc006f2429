// File: fabric/providers/tcp/tcp_attr.h
//
// The attributes the tcp provider reports and the settings it accepts:
// what the stream data path (tcp_ep.h) does. The shm provider starts from
// the same and changes what differs.
#ifndef FABRIC_PROVIDERS_TCP_TCP_ATTR_H_
#define FABRIC_PROVIDERS_TCP_TCP_ATTR_H_

#include <rdma/fabric.h>

#include "fabric/api/core/hints.h"
#include "fabric/providers/util/info_template.h"

namespace fabric {

// Fills `t` for tcp endpoints of `type`: FI_EP_MSG or FI_EP_RDM.
void DescribeTcpEndpoint(fi_ep_type type, InfoTemplate* t);

AttrSupport TcpAttrSupport();

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_ATTR_H_

// File: fabric/providers/udp/udp_cm.h
//
// fi_getname and fi_setname of a udp endpoint (fi_cm(3)): the address its
// socket is bound to, in the endpoint's addr_format (a raw sockaddr, or an
// FI_ADDR_STR string); fi_setname rebinds to another address before
// fi_enable. A connectionless endpoint has no other CM operation
// (-FI_ENOSYS).
#ifndef FABRIC_PROVIDERS_UDP_UDP_CM_H_
#define FABRIC_PROVIDERS_UDP_UDP_CM_H_

#include <rdma/fi_cm.h>

namespace fabric {

extern fi_ops_cm kUdpCmOps;

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_CM_H_

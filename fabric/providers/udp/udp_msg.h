// File: fabric/providers/udp/udp_msg.h
//
// fi_send, fi_sendv, fi_sendmsg, fi_inject, fi_recv, fi_recvv and
// fi_recvmsg of a udp endpoint (fi_msg(3)); one message is one datagram.
//
// Every call checks its arguments first: the endpoint must be enabled
// (-FI_EOPBADSTATE), iov_count within the iov_limit and every buffer
// described (-FI_EINVAL), flags known (-FI_EBADFLAGS), the destination in
// the AV (-FI_EINVAL), a message at most ep_attr->max_msg_size
// (-FI_EMSGSIZE) and an injected one at most tx_attr->inject_size
// (-FI_EINVAL). A send copies the message through the domain's HmemCopier
// and hands it to the kernel before it returns; its completion (unless
// fi_inject, or FI_SELECTIVE_COMPLETION without FI_COMPLETION) and its
// counter increment are already written then. -FI_EAGAIN when the socket's
// buffer or the transmit CQ is full, or when rx_attr->size receives are
// posted or the receive CQ has no room left for another. udp carries no
// remote CQ data: fi_senddata and fi_injectdata return -FI_ENOSYS.
#ifndef FABRIC_PROVIDERS_UDP_UDP_MSG_H_
#define FABRIC_PROVIDERS_UDP_UDP_MSG_H_

#include <rdma/fi_endpoint.h>

namespace fabric {

extern fi_ops_msg kUdpMsgOps;

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UDP_UDP_MSG_H_

// File: fabric/providers/stream/stream_attr.h
//
// The attributes of endpoints on the stream data path (stream_ep.h) and the
// settings they accept: what the tcp provider reports. The shm and verbs
// providers start from the same and change what differs.
#ifndef FABRIC_PROVIDERS_STREAM_STREAM_ATTR_H_
#define FABRIC_PROVIDERS_STREAM_STREAM_ATTR_H_

#include <rdma/fabric.h>

#include "fabric/api/core/hints.h"
#include "fabric/providers/util/info_template.h"

namespace fabric {
namespace stream {

// Fills `t` for stream endpoints of `type`: FI_EP_MSG or FI_EP_RDM.
void DescribeStreamEndpoint(fi_ep_type type, InfoTemplate* t);

AttrSupport StreamAttrSupport();

}  // namespace stream
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_STREAM_STREAM_ATTR_H_

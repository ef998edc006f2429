#include "fabric/providers/stream/stream_attr.h"

#include <rdma/fi_domain.h>
#include <stdint.h>

namespace fabric {
namespace stream {
namespace {

constexpr uint64_t kTxCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
                             FI_SEND | FI_READ | FI_WRITE | FI_FENCE;
constexpr uint64_t kRxCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC |
                             FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE |
                             FI_MULTI_RECV | FI_RMA_EVENT;
// Receive capabilities only connectionless endpoints have.
constexpr uint64_t kRdmRxCaps = FI_DIRECTED_RECV | FI_SOURCE | FI_SOURCE_ERR;

// A byte stream delivers in order, so every ordering holds.
constexpr uint64_t kOrder =
    FI_ORDER_RAR | FI_ORDER_RAW | FI_ORDER_RAS | FI_ORDER_WAR | FI_ORDER_WAW |
    FI_ORDER_WAS | FI_ORDER_SAR | FI_ORDER_SAW | FI_ORDER_SAS |
    FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW |
    FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR |
    FI_ORDER_ATOMIC_WAW;

}  // namespace

void DescribeStreamEndpoint(fi_ep_type type, InfoTemplate* t) {
  t->tx.msg_order = kOrder;
  t->tx.comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;
  t->tx.inject_size = 128;
  t->tx.rma_iov_limit = 4;
  t->rx.msg_order = kOrder;
  t->rx.comp_order = FI_ORDER_STRICT | FI_ORDER_DATA;

  t->ep.type = type;
  t->ep.protocol = FI_PROTO_SOCK_TCP;
  t->ep.protocol_version = 1;
  t->ep.max_msg_size = SIZE_MAX;
  t->ep.max_order_raw_size = SIZE_MAX;
  t->ep.max_order_war_size = SIZE_MAX;
  t->ep.max_order_waw_size = SIZE_MAX;
  t->ep.mem_tag_format = UINT64_MAX;

  t->domain.mr_key_size = 8;
  t->domain.cq_data_size = 8;
  // Shared contexts: shared_context.h.
  t->domain.max_ep_srx_ctx = 8192;
  t->domain.max_ep_stx_ctx = 8192;
  t->domain.mr_iov_limit = 4;
  t->domain.mr_cnt = 65536;

  if (type == FI_EP_RDM) {
    t->domain.caps |= FI_SHARED_AV;
    t->SetCaps(kTxCaps, kRxCaps | kRdmRxCaps);
    t->info.caps |= FI_AV_USER_ID;
  } else {
    t->SetCaps(kTxCaps, kRxCaps);
  }
}

AttrSupport StreamAttrSupport() {
  AttrSupport support = FullAttrSupport();
  support.mr_mode_optional = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                             FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                             FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
                             FI_MR_ENDPOINT | FI_MR_HMEM | FI_MR_COLLECTIVE;
  support.tx_op_flags = kTxOpFlags;
  support.rx_op_flags = kRxOpFlags;
  support.max_auth_key_size = 64;
  return support;
}

}  // namespace stream
}  // namespace fabric

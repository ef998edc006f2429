// Flag lists, as libfabric 1.17's fi_tostr prints them. Each table is in
// libfabric's print order, which is not always bit order.
#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include "fabric/api/text/printers.h"

namespace fabric::text {
namespace {

struct NamedFlag {
  uint64_t flag;
  const char* name;
};

#define NAMED(flag) \
  { flag, #flag }

constexpr NamedFlag kCaps[] = {
    NAMED(FI_MSG),          NAMED(FI_RMA),
    NAMED(FI_TAGGED),       NAMED(FI_ATOMIC),
    NAMED(FI_MULTICAST),    NAMED(FI_COLLECTIVE),
    NAMED(FI_READ),         NAMED(FI_WRITE),
    NAMED(FI_RECV),         NAMED(FI_SEND),
    NAMED(FI_REMOTE_READ),  NAMED(FI_REMOTE_WRITE),
    NAMED(FI_MULTI_RECV),   NAMED(FI_REMOTE_CQ_DATA),
    NAMED(FI_TRIGGER),      NAMED(FI_FENCE),
    NAMED(FI_VARIABLE_MSG), NAMED(FI_RMA_PMEM),
    NAMED(FI_SOURCE_ERR),   NAMED(FI_LOCAL_COMM),
    NAMED(FI_REMOTE_COMM),  NAMED(FI_SHARED_AV),
    NAMED(FI_RMA_EVENT),    NAMED(FI_SOURCE),
    NAMED(FI_NAMED_RX_CTX), NAMED(FI_DIRECTED_RECV),
    NAMED(FI_HMEM),
};

constexpr NamedFlag kOpFlags[] = {
    NAMED(FI_MULTICAST),
    NAMED(FI_MULTI_RECV),
    NAMED(FI_REMOTE_CQ_DATA),
    NAMED(FI_MORE),
    NAMED(FI_PEEK),
    NAMED(FI_TRIGGER),
    NAMED(FI_FENCE),
    NAMED(FI_COMPLETION),
    NAMED(FI_INJECT),
    NAMED(FI_INJECT_COMPLETE),
    NAMED(FI_TRANSMIT_COMPLETE),
    NAMED(FI_DELIVERY_COMPLETE),
    NAMED(FI_MATCH_COMPLETE),
    NAMED(FI_AFFINITY),
    NAMED(FI_CLAIM),
    NAMED(FI_DISCARD),
};

constexpr NamedFlag kMsgOrders[] = {
    NAMED(FI_ORDER_RAR),        NAMED(FI_ORDER_RAW),
    NAMED(FI_ORDER_RAS),        NAMED(FI_ORDER_WAR),
    NAMED(FI_ORDER_WAW),        NAMED(FI_ORDER_WAS),
    NAMED(FI_ORDER_SAR),        NAMED(FI_ORDER_SAW),
    NAMED(FI_ORDER_SAS),        NAMED(FI_ORDER_RMA_RAR),
    NAMED(FI_ORDER_RMA_RAW),    NAMED(FI_ORDER_RMA_WAR),
    NAMED(FI_ORDER_RMA_WAW),    NAMED(FI_ORDER_ATOMIC_RAR),
    NAMED(FI_ORDER_ATOMIC_RAW), NAMED(FI_ORDER_ATOMIC_WAR),
    NAMED(FI_ORDER_ATOMIC_WAW),
};

constexpr NamedFlag kModes[] = {
    NAMED(FI_CONTEXT),         NAMED(FI_MSG_PREFIX),
    NAMED(FI_ASYNC_IOV),       NAMED(FI_RX_CQ_DATA),
    NAMED(FI_LOCAL_MR),        NAMED(FI_NOTIFY_FLAGS_ONLY),
    NAMED(FI_RESTRICTED_COMP), NAMED(FI_CONTEXT2),
    NAMED(FI_BUFFERED_RECV),
};

constexpr NamedFlag kCqEventFlags[] = {
    NAMED(FI_SEND),
    NAMED(FI_RECV),
    NAMED(FI_RMA),
    NAMED(FI_ATOMIC),
    NAMED(FI_MSG),
    NAMED(FI_TAGGED),
    NAMED(FI_READ),
    NAMED(FI_WRITE),
    NAMED(FI_REMOTE_READ),
    NAMED(FI_REMOTE_WRITE),
    NAMED(FI_REMOTE_CQ_DATA),
    NAMED(FI_MULTI_RECV),
    NAMED(FI_MORE),
    NAMED(FI_CLAIM),
};

constexpr NamedFlag kMrModes[] = {
    NAMED(FI_MR_BASIC),    NAMED(FI_MR_SCALABLE),   NAMED(FI_MR_LOCAL),
    NAMED(FI_MR_RAW),      NAMED(FI_MR_VIRT_ADDR),  NAMED(FI_MR_ALLOCATED),
    NAMED(FI_MR_PROV_KEY), NAMED(FI_MR_MMU_NOTIFY), NAMED(FI_MR_RMA_EVENT),
    NAMED(FI_MR_ENDPOINT), NAMED(FI_MR_HMEM),       NAMED(FI_MR_COLLECTIVE),
};

#undef NAMED

void AppendName(TextBuffer& out, const char* name) {
  out.Appendf("%s, ", name);
}

template <size_t N>
void AppendFlags(TextBuffer& out, const NamedFlag (&table)[N], uint64_t flags) {
  for (const NamedFlag& entry : table) {
    if ((flags & entry.flag) != 0) AppendName(out, entry.name);
  }
  out.TrimTrailingComma();
}

}  // namespace

void AppendCaps(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kCaps, flags);
}

void AppendOpFlags(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kOpFlags, flags);
}

void AppendMsgOrder(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kMsgOrders, flags);
}

// Completion order names only "none of the ordering bits" and "all of them".
void AppendCompOrder(TextBuffer& out, uint64_t flags) {
  uint64_t ordering = flags & FI_ORDER_STRICT;
  if (ordering == FI_ORDER_NONE) AppendName(out, "FI_ORDER_NONE");
  if (ordering == FI_ORDER_STRICT) AppendName(out, "FI_ORDER_STRICT");
  if ((flags & FI_ORDER_DATA) != 0) AppendName(out, "FI_ORDER_DATA");
  out.TrimTrailingComma();
}

void AppendMode(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kModes, flags);
}

void AppendCqEventFlags(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kCqEventFlags, flags);
}

void AppendMrMode(TextBuffer& out, uint64_t flags) {
  AppendFlags(out, kMrModes, flags);
}

}  // namespace fabric::text

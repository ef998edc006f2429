// fi_tostr and fi_tostr_r: libfabric's text form of its types, byte-identical
// to libfabric 1.17's, truncation included.
#include <rdma/fabric.h>
#include <stdint.h>

#include "fabric/api/core/export.h"
#include "fabric/api/text/printers.h"
#include "fabric/api/text/text_buffer.h"

namespace fabric::text {
namespace {

// The size of libfabric's fi_tostr buffer; longer text is truncated.
constexpr size_t kTostrBufferSize = 8192;

template <typename T>
T Value(const void* data) {
  return *static_cast<const T*>(data);
}

void AppendValue(TextBuffer& out, const void* data, int datatype) {
  switch (datatype) {
    case FI_TYPE_INFO:
      AppendInfo(out, *static_cast<const struct fi_info*>(data));
      break;
    case FI_TYPE_EP_TYPE:
      out.Append(EpTypeName(Value<int>(data)));
      break;
    case FI_TYPE_CAPS:
      AppendCaps(out, Value<uint64_t>(data));
      break;
    case FI_TYPE_OP_FLAGS:
      AppendOpFlags(out, Value<uint64_t>(data));
      break;
    case FI_TYPE_ADDR_FORMAT:
      out.Append(AddrFormatName(Value<uint32_t>(data)));
      break;
    case FI_TYPE_TX_ATTR:
      AppendTxAttr(out, static_cast<const struct fi_tx_attr*>(data), "");
      break;
    case FI_TYPE_RX_ATTR:
      AppendRxAttr(out, static_cast<const struct fi_rx_attr*>(data), "");
      break;
    case FI_TYPE_EP_ATTR:
      AppendEpAttr(out, static_cast<const struct fi_ep_attr*>(data), "");
      break;
    case FI_TYPE_DOMAIN_ATTR:
      AppendDomainAttr(out, static_cast<const struct fi_domain_attr*>(data),
                       "");
      break;
    case FI_TYPE_FABRIC_ATTR:
      AppendFabricAttr(out, static_cast<const struct fi_fabric_attr*>(data),
                       "");
      break;
    case FI_TYPE_THREADING:
      out.Append(ThreadingName(Value<int>(data)));
      break;
    case FI_TYPE_PROGRESS:
      out.Append(ProgressName(Value<int>(data)));
      break;
    case FI_TYPE_PROTOCOL:
      out.Append(ProtocolName(Value<uint32_t>(data)));
      break;
    case FI_TYPE_MSG_ORDER:
      AppendMsgOrder(out, Value<uint64_t>(data));
      break;
    case FI_TYPE_MODE:
      AppendMode(out, Value<uint64_t>(data));
      break;
    case FI_TYPE_AV_TYPE:
      out.Append(AvTypeName(Value<int>(data)));
      break;
    case FI_TYPE_ATOMIC_TYPE:
      out.Append(AtomicTypeName(Value<int>(data)));
      break;
    case FI_TYPE_ATOMIC_OP:
      out.Append(AtomicOpName(Value<int>(data)));
      break;
    case FI_TYPE_VERSION:  // the library's version; data is not read
      out.Appendf("%d.%d.%d", FI_MAJOR_VERSION, FI_MINOR_VERSION,
                  FI_REVISION_VERSION);
      break;
    case FI_TYPE_EQ_EVENT:
      out.Append(EqEventName(Value<int>(data)));
      break;
    case FI_TYPE_CQ_EVENT_FLAGS:
      AppendCqEventFlags(out, Value<uint64_t>(data));
      break;
    case FI_TYPE_MR_MODE:
      AppendMrMode(out, static_cast<uint64_t>(Value<int>(data)));
      break;
    case FI_TYPE_OP_TYPE:
      out.Append(OpTypeName(Value<int>(data)));
      break;
    case FI_TYPE_FID:
      AppendFid(out, "fid: ", static_cast<const struct fid*>(data));
      break;
    case FI_TYPE_COLLECTIVE_OP:
      out.Append(CollectiveOpName(Value<int>(data)));
      break;
    case FI_TYPE_HMEM_IFACE:
      out.Append(HmemIfaceName(Value<int>(data)));
      break;
    case FI_TYPE_CQ_FORMAT:
      out.Append(CqFormatName(Value<int>(data)));
      break;
    case FI_TYPE_LOG_LEVEL:
      out.Append(LogLevelName(Value<int>(data)));
      break;
    case FI_TYPE_LOG_SUBSYS:
      out.Append(LogSubsysName(Value<int>(data)));
      break;
    default:
      out.Append("Unknown type");
      break;
  }
}

// The type as an int: C callers may pass any value.
char* Tostr(char* buf, size_t len, const void* data, int datatype) {
  if (buf == nullptr || len == 0 || data == nullptr) return nullptr;
  TextBuffer out(buf, len);
  AppendValue(out, data, datatype);
  return buf;
}

}  // namespace
}  // namespace fabric::text

extern "C" {

FABRIC_EXPORT char* fi_tostr_r(char* buf, size_t len, const void* data,
                               enum fi_type datatype) {
  return fabric::text::Tostr(buf, len, data, fabric::text::EnumValue(datatype));
}

FABRIC_EXPORT char* fi_tostr(const void* data, enum fi_type datatype) {
  thread_local char buf[fabric::text::kTostrBufferSize];
  return fabric::text::Tostr(buf, sizeof(buf), data,
                             fabric::text::EnumValue(datatype));
}

}  // extern "C"

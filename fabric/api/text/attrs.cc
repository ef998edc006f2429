// The YAML-like dumps of fi_info and its attributes, as libfabric 1.17's
// fi_tostr prints them.
#include <inttypes.h>
#include <rdma/fabric.h>
#include <stddef.h>
#include <stdint.h>

#include <string>

#include "fabric/api/text/printers.h"

namespace fabric::text {
namespace {

using FlagAppender = void (*)(TextBuffer&, uint64_t);

void AppendFlagsField(TextBuffer& out, const std::string& indent,
                      const char* field, FlagAppender append, uint64_t flags) {
  out.Appendf("%s%s: [ ", indent.c_str(), field);
  append(out, flags);
  out.Append(" ]\n");
}

void AppendSizeField(TextBuffer& out, const std::string& indent,
                     const char* field, size_t value) {
  out.Appendf("%s%s: %zu\n", indent.c_str(), field, value);
}

void AppendTextField(TextBuffer& out, const std::string& indent,
                     const char* field, const char* text) {
  out.Appendf("%s%s: %s\n", indent.c_str(), field,
              text != nullptr ? text : "(null)");
}

void AppendVersionField(TextBuffer& out, const std::string& indent,
                        const char* field, uint32_t version) {
  out.Appendf("%s%s: %u.%u\n", indent.c_str(), field, FI_MAJOR(version),
              FI_MINOR(version));
}

// FI_SHARED_CONTEXT by name.
void AppendContextCountField(TextBuffer& out, const std::string& indent,
                             const char* field, size_t count) {
  if (count == FI_SHARED_CONTEXT) {
    AppendTextField(out, indent, field, "FI_SHARED_CONTEXT");
  } else {
    AppendSizeField(out, indent, field, count);
  }
}

void AppendAddressField(TextBuffer& out, const std::string& indent,
                        const char* field, uint32_t format, const void* addr) {
  out.Appendf("%s%s: ", indent.c_str(), field);
  AppendAddress(out, format, addr);
  out.Append("\n");
}

bool HasTostr(const struct fid* fid) {
  const struct fi_ops* ops = fid != nullptr ? fid->ops : nullptr;
  return ops != nullptr && ops->size > offsetof(struct fi_ops, tostr) &&
         ops->tostr != nullptr;
}

// Prints the heading; false, after "(null)", when there is nothing under it.
bool AppendHeading(TextBuffer& out, const char* prefix, const char* heading,
                   const void* attr) {
  out.Appendf("%s%s:%s\n", prefix, heading, attr == nullptr ? " (null)" : "");
  return attr != nullptr;
}

}  // namespace

void AppendFid(TextBuffer& out, const char* label, const struct fid* fid) {
  if (!HasTostr(fid)) {
    out.Appendf("%s%s\n", label, PointerText(fid).c_str());
    return;
  }
  // libfabric hands over the start of the buffer with only the room left.
  fid->ops->tostr(fid, out.data(), out.size() - out.length());
}

// The fields fi_tx_attr and fi_rx_attr share: their first five.
template <typename QueueAttr>
void AppendQueueFlags(TextBuffer& out, const std::string& indent,
                      const QueueAttr* attr) {
  AppendFlagsField(out, indent, "caps", AppendCaps, attr->caps);
  AppendFlagsField(out, indent, "mode", AppendMode, attr->mode);
  AppendFlagsField(out, indent, "op_flags", AppendOpFlags, attr->op_flags);
  AppendFlagsField(out, indent, "msg_order", AppendMsgOrder, attr->msg_order);
  AppendFlagsField(out, indent, "comp_order", AppendCompOrder,
                   attr->comp_order);
}

void AppendTxAttr(TextBuffer& out, const struct fi_tx_attr* attr,
                  const char* prefix) {
  if (!AppendHeading(out, prefix, "fi_tx_attr", attr)) return;
  std::string indent = std::string(prefix) + kTab;
  AppendQueueFlags(out, indent, attr);
  AppendSizeField(out, indent, "inject_size", attr->inject_size);
  AppendSizeField(out, indent, "size", attr->size);
  AppendSizeField(out, indent, "iov_limit", attr->iov_limit);
  AppendSizeField(out, indent, "rma_iov_limit", attr->rma_iov_limit);
  out.Appendf("%stclass: 0x%x\n", indent.c_str(), attr->tclass);
}

void AppendRxAttr(TextBuffer& out, const struct fi_rx_attr* attr,
                  const char* prefix) {
  if (!AppendHeading(out, prefix, "fi_rx_attr", attr)) return;
  std::string indent = std::string(prefix) + kTab;
  AppendQueueFlags(out, indent, attr);
  AppendSizeField(out, indent, "total_buffered_recv",
                  attr->total_buffered_recv);
  AppendSizeField(out, indent, "size", attr->size);
  AppendSizeField(out, indent, "iov_limit", attr->iov_limit);
}

void AppendEpAttr(TextBuffer& out, const struct fi_ep_attr* attr,
                  const char* prefix) {
  if (!AppendHeading(out, prefix, "fi_ep_attr", attr)) return;
  std::string indent = std::string(prefix) + kTab;
  AppendTextField(out, indent, "type", EpTypeName(EnumValue(attr->type)));
  AppendTextField(out, indent, "protocol", ProtocolName(attr->protocol));
  out.Appendf("%sprotocol_version: %d\n", indent.c_str(),
              static_cast<int>(attr->protocol_version));
  AppendSizeField(out, indent, "max_msg_size", attr->max_msg_size);
  AppendSizeField(out, indent, "msg_prefix_size", attr->msg_prefix_size);
  AppendSizeField(out, indent, "max_order_raw_size", attr->max_order_raw_size);
  AppendSizeField(out, indent, "max_order_war_size", attr->max_order_war_size);
  AppendSizeField(out, indent, "max_order_waw_size", attr->max_order_waw_size);
  out.Appendf("%smem_tag_format: 0x%016" PRIx64 "\n", indent.c_str(),
              attr->mem_tag_format);
  AppendContextCountField(out, indent, "tx_ctx_cnt", attr->tx_ctx_cnt);
  AppendContextCountField(out, indent, "rx_ctx_cnt", attr->rx_ctx_cnt);
  AppendSizeField(out, indent, "auth_key_size", attr->auth_key_size);
}

void AppendDomainAttr(TextBuffer& out, const struct fi_domain_attr* attr,
                      const char* prefix) {
  if (!AppendHeading(out, prefix, "fi_domain_attr", attr)) return;
  std::string indent = std::string(prefix) + kTab;
  // Only the low 32 bits of the pointer, as libfabric prints it with %x.
  out.Appendf("%sdomain: 0x%x\n", indent.c_str(),
              static_cast<unsigned>(reinterpret_cast<uintptr_t>(attr->domain)));
  AppendTextField(out, indent, "name", attr->name);
  AppendTextField(out, indent, "threading",
                  ThreadingName(EnumValue(attr->threading)));
  AppendTextField(out, indent, "control_progress",
                  ProgressName(EnumValue(attr->control_progress)));
  AppendTextField(out, indent, "data_progress",
                  ProgressName(EnumValue(attr->data_progress)));
  AppendTextField(out, indent, "resource_mgmt",
                  ResourceMgmtName(EnumValue(attr->resource_mgmt)));
  AppendTextField(out, indent, "av_type", AvTypeName(EnumValue(attr->av_type)));
  AppendFlagsField(out, indent, "mr_mode", AppendMrMode,
                   static_cast<uint64_t>(attr->mr_mode));
  AppendSizeField(out, indent, "mr_key_size", attr->mr_key_size);
  AppendSizeField(out, indent, "cq_data_size", attr->cq_data_size);
  AppendSizeField(out, indent, "cq_cnt", attr->cq_cnt);
  AppendSizeField(out, indent, "ep_cnt", attr->ep_cnt);
  AppendSizeField(out, indent, "tx_ctx_cnt", attr->tx_ctx_cnt);
  AppendSizeField(out, indent, "rx_ctx_cnt", attr->rx_ctx_cnt);
  AppendSizeField(out, indent, "max_ep_tx_ctx", attr->max_ep_tx_ctx);
  AppendSizeField(out, indent, "max_ep_rx_ctx", attr->max_ep_rx_ctx);
  AppendSizeField(out, indent, "max_ep_stx_ctx", attr->max_ep_stx_ctx);
  AppendSizeField(out, indent, "max_ep_srx_ctx", attr->max_ep_srx_ctx);
  AppendSizeField(out, indent, "cntr_cnt", attr->cntr_cnt);
  AppendSizeField(out, indent, "mr_iov_limit", attr->mr_iov_limit);
  AppendFlagsField(out, indent, "caps", AppendCaps, attr->caps);
  AppendFlagsField(out, indent, "mode", AppendMode, attr->mode);
  AppendSizeField(out, indent, "auth_key_size", attr->auth_key_size);
  AppendSizeField(out, indent, "max_err_data", attr->max_err_data);
  AppendSizeField(out, indent, "mr_cnt", attr->mr_cnt);
  out.Appendf("%stclass: 0x%x\n", indent.c_str(), attr->tclass);
}

void AppendFabricAttr(TextBuffer& out, const struct fi_fabric_attr* attr,
                      const char* prefix) {
  if (!AppendHeading(out, prefix, "fi_fabric_attr", attr)) return;
  std::string indent = std::string(prefix) + kTab;
  AppendTextField(out, indent, "name", attr->name);
  AppendTextField(out, indent, "prov_name", attr->prov_name);
  AppendVersionField(out, indent, "prov_version", attr->prov_version);
  AppendVersionField(out, indent, "api_version", attr->api_version);
}

void AppendInfo(TextBuffer& out, const struct fi_info& info) {
  const std::string indent = kTab;
  out.Append("fi_info:\n");
  AppendFlagsField(out, indent, "caps", AppendCaps, info.caps);
  AppendFlagsField(out, indent, "mode", AppendMode, info.mode);
  AppendTextField(out, indent, "addr_format", AddrFormatName(info.addr_format));
  AppendSizeField(out, indent, "src_addrlen", info.src_addrlen);
  AppendSizeField(out, indent, "dest_addrlen", info.dest_addrlen);
  AppendAddressField(out, indent, "src_addr", info.addr_format, info.src_addr);
  AppendAddressField(out, indent, "dest_addr", info.addr_format,
                     info.dest_addr);
  AppendFid(out, (indent + "handle: ").c_str(), info.handle);
  AppendTxAttr(out, info.tx_attr, kTab);
  AppendRxAttr(out, info.rx_attr, kTab);
  AppendEpAttr(out, info.ep_attr, kTab);
  AppendDomainAttr(out, info.domain_attr, kTab);
  AppendFabricAttr(out, info.fabric_attr, kTab);
  AppendFid(out, (indent + "nic: ").c_str(),
            info.nic != nullptr ? &info.nic->fid : nullptr);
}

}  // namespace fabric::text

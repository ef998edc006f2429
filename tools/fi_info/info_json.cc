#include "tools/fi_info/info_json.h"

#include "tools/fi_info/json_members.h"
#include "tools/fi_info/nic_json.h"
#include "tools/fi_info/tostr_text.h"

namespace fi_info_tool {
namespace {

// The members fi_tx_attr and fi_rx_attr share (their first five). comp_order
// has no fi_type of its own; its names are taken from the struct's text.
template <typename QueueAttr>
void WriteQueueFlags(JsonWriter& json, const QueueAttr& attr,
                     enum fi_type struct_type) {
  TostrFlagsMember(json, "caps", &attr.caps, FI_TYPE_CAPS);
  TostrFlagsMember(json, "mode", &attr.mode, FI_TYPE_MODE);
  TostrFlagsMember(json, "op_flags", &attr.op_flags, FI_TYPE_OP_FLAGS);
  TostrFlagsMember(json, "msg_order", &attr.msg_order, FI_TYPE_MSG_ORDER);
  NameListMember(json, "comp_order",
                 SplitTostrList(TostrField(TostrText(&attr, struct_type),
                                           "comp_order")
                                    .value_or("")));
}

void WriteTxAttr(JsonWriter& json, const fi_tx_attr& attr) {
  json.BeginObject();
  WriteQueueFlags(json, attr, FI_TYPE_TX_ATTR);
  NumberMember(json, "inject_size", attr.inject_size);
  NumberMember(json, "size", attr.size);
  NumberMember(json, "iov_limit", attr.iov_limit);
  NumberMember(json, "rma_iov_limit", attr.rma_iov_limit);
  NumberMember(json, "tclass", attr.tclass);
  json.EndObject();
}

void WriteRxAttr(JsonWriter& json, const fi_rx_attr& attr) {
  json.BeginObject();
  WriteQueueFlags(json, attr, FI_TYPE_RX_ATTR);
  NumberMember(json, "total_buffered_recv", attr.total_buffered_recv);
  NumberMember(json, "size", attr.size);
  NumberMember(json, "iov_limit", attr.iov_limit);
  json.EndObject();
}

void WriteEpAttr(JsonWriter& json, const fi_ep_attr& attr) {
  json.BeginObject();
  TostrNameMember(json, "type", &attr.type, FI_TYPE_EP_TYPE);
  TostrNameMember(json, "protocol", &attr.protocol, FI_TYPE_PROTOCOL);
  NumberMember(json, "protocol_version", attr.protocol_version);
  NumberMember(json, "max_msg_size", attr.max_msg_size);
  NumberMember(json, "msg_prefix_size", attr.msg_prefix_size);
  NumberMember(json, "max_order_raw_size", attr.max_order_raw_size);
  NumberMember(json, "max_order_war_size", attr.max_order_war_size);
  NumberMember(json, "max_order_waw_size", attr.max_order_waw_size);
  NumberMember(json, "mem_tag_format", attr.mem_tag_format);
  NumberMember(json, "tx_ctx_cnt", attr.tx_ctx_cnt);
  NumberMember(json, "rx_ctx_cnt", attr.rx_ctx_cnt);
  NumberMember(json, "auth_key_size", attr.auth_key_size);
  json.EndObject();
}

void WriteDomainAttr(JsonWriter& json, const fi_domain_attr& attr) {
  json.BeginObject();
  TextMember(json, "name", attr.name);
  TostrNameMember(json, "threading", &attr.threading, FI_TYPE_THREADING);
  TostrNameMember(json, "control_progress", &attr.control_progress,
                  FI_TYPE_PROGRESS);
  TostrNameMember(json, "data_progress", &attr.data_progress, FI_TYPE_PROGRESS);
  // resource_mgmt has no fi_type of its own; its name is taken from the
  // struct's text.
  OptionalTextMember(
      json, "resource_mgmt",
      TostrField(TostrText(&attr, FI_TYPE_DOMAIN_ATTR), "resource_mgmt"));
  TostrNameMember(json, "av_type", &attr.av_type, FI_TYPE_AV_TYPE);
  TostrFlagsMember(json, "mr_mode", &attr.mr_mode, FI_TYPE_MR_MODE);
  NumberMember(json, "mr_key_size", attr.mr_key_size);
  NumberMember(json, "cq_data_size", attr.cq_data_size);
  NumberMember(json, "cq_cnt", attr.cq_cnt);
  NumberMember(json, "ep_cnt", attr.ep_cnt);
  NumberMember(json, "tx_ctx_cnt", attr.tx_ctx_cnt);
  NumberMember(json, "rx_ctx_cnt", attr.rx_ctx_cnt);
  NumberMember(json, "max_ep_tx_ctx", attr.max_ep_tx_ctx);
  NumberMember(json, "max_ep_rx_ctx", attr.max_ep_rx_ctx);
  NumberMember(json, "max_ep_stx_ctx", attr.max_ep_stx_ctx);
  NumberMember(json, "max_ep_srx_ctx", attr.max_ep_srx_ctx);
  NumberMember(json, "cntr_cnt", attr.cntr_cnt);
  NumberMember(json, "mr_iov_limit", attr.mr_iov_limit);
  TostrFlagsMember(json, "caps", &attr.caps, FI_TYPE_CAPS);
  TostrFlagsMember(json, "mode", &attr.mode, FI_TYPE_MODE);
  NumberMember(json, "auth_key_size", attr.auth_key_size);
  NumberMember(json, "max_err_data", attr.max_err_data);
  NumberMember(json, "mr_cnt", attr.mr_cnt);
  NumberMember(json, "tclass", attr.tclass);
  json.EndObject();
}

void WriteFabricAttr(JsonWriter& json, const fi_fabric_attr& attr) {
  json.BeginObject();
  TextMember(json, "name", attr.name);
  TextMember(json, "prov_name", attr.prov_name);
  VersionMember(json, "prov_version", attr.prov_version);
  VersionMember(json, "api_version", attr.api_version);
  json.EndObject();
}

// Writes `key`: the attribute written by `write`, or null.
template <typename Attr>
void AttrMember(JsonWriter& json, const char* key, const Attr* attr,
                void (*write)(JsonWriter&, const Attr&)) {
  json.Key(key);
  if (attr == nullptr) {
    json.Null();
  } else {
    write(json, *attr);
  }
}

// An address as -v shows it (taken from the fi_info's text), or null.
void AddressMember(JsonWriter& json, const char* key, const void* address,
                   const std::string& info_text) {
  if (address == nullptr) {
    json.Key(key);
    json.Null();
    return;
  }
  OptionalTextMember(json, key, TostrField(info_text, key));
}

}  // namespace

void WriteInfoJson(JsonWriter& json, const fi_info& info,
                   const std::string& info_text) {
  json.BeginObject();
  TostrFlagsMember(json, "caps", &info.caps, FI_TYPE_CAPS);
  TostrFlagsMember(json, "mode", &info.mode, FI_TYPE_MODE);
  TostrNameMember(json, "addr_format", &info.addr_format, FI_TYPE_ADDR_FORMAT);
  NumberMember(json, "src_addrlen", info.src_addrlen);
  NumberMember(json, "dest_addrlen", info.dest_addrlen);
  AddressMember(json, "src_addr", info.src_addr, info_text);
  AddressMember(json, "dest_addr", info.dest_addr, info_text);
  AttrMember(json, "tx_attr", info.tx_attr, WriteTxAttr);
  AttrMember(json, "rx_attr", info.rx_attr, WriteRxAttr);
  AttrMember(json, "ep_attr", info.ep_attr, WriteEpAttr);
  AttrMember(json, "domain_attr", info.domain_attr, WriteDomainAttr);
  AttrMember(json, "fabric_attr", info.fabric_attr, WriteFabricAttr);
  AttrMember(json, "nic", info.nic, WriteNic);
  json.EndObject();
}

void WriteInfoListJson(const fi_info* list,
                       const std::optional<std::string>& substring,
                       std::ostream& out) {
  JsonWriter json(out);
  json.BeginArray();
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    const std::string info_text = TostrText(info, FI_TYPE_INFO);
    if (!ContainsIgnoringCase(info_text.c_str(), substring)) continue;
    WriteInfoJson(json, *info, info_text);
  }
  json.EndArray();
}

}  // namespace fi_info_tool

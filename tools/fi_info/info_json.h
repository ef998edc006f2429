// --format=json: the fi_info list as a JSON array, one object per fi_info,
// in fi_getinfo's order. kInfoJsonShape below is the description of the
// format (--help prints it).
#ifndef TOOLS_FI_INFO_INFO_JSON_H_
#define TOOLS_FI_INFO_INFO_JSON_H_

#include <rdma/fabric.h>

#include <optional>
#include <ostream>
#include <string>

#include "tools/fi_info/json_writer.h"

namespace fi_info_tool {

inline constexpr char kInfoJsonShape[] =
    R"(--format=json prints a JSON array with one object per fi_info, in
fi_getinfo's order (-i SUBSTR keeps those whose -v text contains SUBSTR;
with -l they hold what FI_PROV_ATTR_ONLY returns; -e and -g print text
only, so they do not combine with it). Each object:
  {"caps": [FLAG], "mode": [FLAG], "addr_format": NAME,
   "src_addrlen": N, "dest_addrlen": N, "src_addr": ADDR, "dest_addr": ADDR,
   "tx_attr": {"caps": [FLAG], "mode": [FLAG], "op_flags": [FLAG],
               "msg_order": [FLAG], "comp_order": [FLAG], "inject_size": N,
               "size": N, "iov_limit": N, "rma_iov_limit": N, "tclass": N},
   "rx_attr": {"caps": [FLAG], "mode": [FLAG], "op_flags": [FLAG],
               "msg_order": [FLAG], "comp_order": [FLAG],
               "total_buffered_recv": N, "size": N, "iov_limit": N},
   "ep_attr": {"type": NAME, "protocol": NAME, "protocol_version": N,
               "max_msg_size": N, "msg_prefix_size": N,
               "max_order_raw_size": N, "max_order_war_size": N,
               "max_order_waw_size": N, "mem_tag_format": N,
               "tx_ctx_cnt": N, "rx_ctx_cnt": N, "auth_key_size": N},
   "domain_attr": {"name": TEXT, "threading": NAME,
               "control_progress": NAME, "data_progress": NAME,
               "resource_mgmt": NAME, "av_type": NAME, "mr_mode": [FLAG],
               "mr_key_size": N, "cq_data_size": N, "cq_cnt": N,
               "ep_cnt": N, "tx_ctx_cnt": N, "rx_ctx_cnt": N,
               "max_ep_tx_ctx": N, "max_ep_rx_ctx": N, "max_ep_stx_ctx": N,
               "max_ep_srx_ctx": N, "cntr_cnt": N, "mr_iov_limit": N,
               "caps": [FLAG], "mode": [FLAG], "auth_key_size": N,
               "max_err_data": N, "mr_cnt": N, "tclass": N},
   "fabric_attr": {"name": TEXT, "prov_name": TEXT,
               "prov_version": "MAJOR.MINOR", "api_version": "MAJOR.MINOR"},
   "nic": null, or {"device_attr": {"name": TEXT, "device_id": TEXT,
               "device_version": TEXT, "vendor_id": TEXT, "driver": TEXT,
               "firmware": TEXT},
               "bus_attr": {"bus_type": N, "pci": {"domain_id": N,
               "bus_id": N, "device_id": N, "function_id": N} or null},
               "link_attr": {"address": TEXT, "mtu": N, "speed": N,
               "state": N, "network_type": TEXT}}}
FLAG and NAME are the library's names (fi_tostr), e.g. "FI_MSG",
"FI_EP_RDM"; N is a decimal number (enum fi_bus_type and fi_link_state
values for bus_type and state); TEXT is a string or null; ADDR is the
address as -v prints it, or null. An attribute struct (or device_attr,
bus_attr, link_attr) the library left out is null. Pointers (next, handle,
domain, fabric, auth_key, prov_attr) are not shown.
)";

// Writes one fi_info object. `info_text` is fi_tostr_r(&info, FI_TYPE_INFO),
// from which the addresses are taken as -v shows them.
void WriteInfoJson(JsonWriter& json, const fi_info& info,
                   const std::string& info_text);

// Writes the array of the fi_info list starting at `list` (which may be
// null), keeping, with a substring, those whose -v text contains it.
void WriteInfoListJson(const fi_info* list,
                       const std::optional<std::string>& substring,
                       std::ostream& out);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_INFO_JSON_H_

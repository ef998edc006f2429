// The "nic" member of the fi_info JSON (struct fid_nic's attributes).
#ifndef TOOLS_FI_INFO_NIC_JSON_H_
#define TOOLS_FI_INFO_NIC_JSON_H_

#include <rdma/fabric.h>

#include "tools/fi_info/json_writer.h"

namespace fi_info_tool {

// Writes the nic's device, bus and link attributes as an object.
void WriteNic(JsonWriter& json, const fid_nic& nic);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_NIC_JSON_H_

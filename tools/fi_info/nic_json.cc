#include "tools/fi_info/nic_json.h"

#include "tools/fi_info/json_members.h"

namespace fi_info_tool {
namespace {

void WriteDeviceAttr(JsonWriter& json, const fi_device_attr& attr) {
  json.BeginObject();
  TextMember(json, "name", attr.name);
  TextMember(json, "device_id", attr.device_id);
  TextMember(json, "device_version", attr.device_version);
  TextMember(json, "vendor_id", attr.vendor_id);
  TextMember(json, "driver", attr.driver);
  TextMember(json, "firmware", attr.firmware);
  json.EndObject();
}

void WriteBusAttr(JsonWriter& json, const fi_bus_attr& attr) {
  json.BeginObject();
  NumberMember(json, "bus_type", attr.bus_type);
  json.Key("pci");
  if (attr.bus_type == FI_BUS_PCI) {
    json.BeginObject();
    NumberMember(json, "domain_id", attr.attr.pci.domain_id);
    NumberMember(json, "bus_id", attr.attr.pci.bus_id);
    NumberMember(json, "device_id", attr.attr.pci.device_id);
    NumberMember(json, "function_id", attr.attr.pci.function_id);
    json.EndObject();
  } else {
    json.Null();
  }
  json.EndObject();
}

void WriteLinkAttr(JsonWriter& json, const fi_link_attr& attr) {
  json.BeginObject();
  TextMember(json, "address", attr.address);
  NumberMember(json, "mtu", attr.mtu);
  NumberMember(json, "speed", attr.speed);
  NumberMember(json, "state", attr.state);
  TextMember(json, "network_type", attr.network_type);
  json.EndObject();
}

}  // namespace

void WriteNic(JsonWriter& json, const fid_nic& nic) {
  json.BeginObject();
  json.Key("device_attr");
  if (nic.device_attr == nullptr) {
    json.Null();
  } else {
    WriteDeviceAttr(json, *nic.device_attr);
  }
  json.Key("bus_attr");
  if (nic.bus_attr == nullptr) {
    json.Null();
  } else {
    WriteBusAttr(json, *nic.bus_attr);
  }
  json.Key("link_attr");
  if (nic.link_attr == nullptr) {
    json.Null();
  } else {
    WriteLinkAttr(json, *nic.link_attr);
  }
  json.EndObject();
}

}  // namespace fi_info_tool

// File: fabric/api/text/printers.h
//
// The pieces fi_tostr_r is made of: names of enum values, flag lists, addresses
// and the YAML-like dumps of fi_info and its attributes, each as libfabric
// 1.17 prints it.
#ifndef FABRIC_API_TEXT_PRINTERS_H_
#define FABRIC_API_TEXT_PRINTERS_H_

#include <rdma/fabric.h>
#include <stdint.h>
#include <string.h>

#include <string>

#include "fabric/api/core/enum_value.h"
#include "fabric/api/text/text_buffer.h"

namespace fabric::text {

using fabric::EnumValue;

// One level of indentation in the dumps.
inline constexpr char kTab[] = "    ";

// Names of enum values; "Unknown" for values libfabric 1.17 has no name for,
// "Provider specific" for address formats and protocols with FI_PROV_SPECIFIC.
const char* EpTypeName(int value);
const char* AddrFormatName(uint32_t value);
const char* ThreadingName(int value);
const char* ProgressName(int value);
const char* ResourceMgmtName(int value);
const char* ProtocolName(uint32_t value);
const char* AvTypeName(int value);
const char* AtomicTypeName(int value);
const char* AtomicOpName(int value);
const char* EqEventName(int value);
const char* OpTypeName(int value);
const char* CollectiveOpName(int value);
const char* HmemIfaceName(int value);
const char* CqFormatName(int value);
const char* LogLevelName(int value);
const char* LogSubsysName(int value);

// Flag lists: the names of the set flags that libfabric 1.17 prints, in its
// order, joined with ", "; unnamed bits are skipped.
void AppendCaps(TextBuffer& out, uint64_t flags);
void AppendOpFlags(TextBuffer& out, uint64_t flags);
void AppendMsgOrder(TextBuffer& out, uint64_t flags);
void AppendCompOrder(TextBuffer& out, uint64_t flags);
void AppendMode(TextBuffer& out, uint64_t flags);
void AppendCqEventFlags(TextBuffer& out, uint64_t flags);
void AppendMrMode(TextBuffer& out, uint64_t flags);

// "(nil)" or "0x..." as glibc prints %p.
std::string PointerText(const void* pointer);

// An address of the given fi_info addr_format: "fi_sockaddr_in://10.0.0.1:7",
// "(null)", or nothing for formats without a textual form.
void AppendAddress(TextBuffer& out, uint32_t format, const void* addr);

// A fid through its ops->tostr when it has one, else "<label><pointer>\n".
void AppendFid(TextBuffer& out, const char* label, const struct fid* fid);

// Dumps under a heading ("fi_tx_attr:"), each field indented by prefix + kTab;
// a null attr prints "<prefix><heading> (null)".
void AppendInfo(TextBuffer& out, const struct fi_info& info);
void AppendTxAttr(TextBuffer& out, const struct fi_tx_attr* attr,
                  const char* prefix);
void AppendRxAttr(TextBuffer& out, const struct fi_rx_attr* attr,
                  const char* prefix);
void AppendEpAttr(TextBuffer& out, const struct fi_ep_attr* attr,
                  const char* prefix);
void AppendDomainAttr(TextBuffer& out, const struct fi_domain_attr* attr,
                      const char* prefix);
void AppendFabricAttr(TextBuffer& out, const struct fi_fabric_attr* attr,
                      const char* prefix);

}  // namespace fabric::text

#endif  // FABRIC_API_TEXT_PRINTERS_H_

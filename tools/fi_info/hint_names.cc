#include "tools/fi_info/hint_names.h"

#include <rdma/fabric.h>
#include <strings.h>

#include <string>

namespace fi_info_tool {
namespace {

struct HintName {
  const char* name;
  uint64_t value;
};

// The names libfabric's fi_info accepts, no more and no fewer.
constexpr HintName kCapabilityNames[] = {
    {"FI_MSG", FI_MSG},
    {"FI_RMA", FI_RMA},
    {"FI_TAGGED", FI_TAGGED},
    {"FI_ATOMIC", FI_ATOMIC},
    {"FI_MULTICAST", FI_MULTICAST},
    {"FI_COLLECTIVE", FI_COLLECTIVE},
    {"FI_READ", FI_READ},
    {"FI_WRITE", FI_WRITE},
    {"FI_RECV", FI_RECV},
    {"FI_SEND", FI_SEND},
    {"FI_REMOTE_READ", FI_REMOTE_READ},
    {"FI_REMOTE_WRITE", FI_REMOTE_WRITE},
    {"FI_MULTI_RECV", FI_MULTI_RECV},
    {"FI_REMOTE_CQ_DATA", FI_REMOTE_CQ_DATA},
    {"FI_MORE", FI_MORE},
    {"FI_PEEK", FI_PEEK},
    {"FI_TRIGGER", FI_TRIGGER},
    {"FI_FENCE", FI_FENCE},
    {"FI_SOURCE_ERR", FI_SOURCE_ERR},
    {"FI_LOCAL_COMM", FI_LOCAL_COMM},
    {"FI_REMOTE_COMM", FI_REMOTE_COMM},
    {"FI_SHARED_AV", FI_SHARED_AV},
    {"FI_RMA_EVENT", FI_RMA_EVENT},
    {"FI_SOURCE", FI_SOURCE},
    {"FI_NAMED_RX_CTX", FI_NAMED_RX_CTX},
    {"FI_DIRECTED_RECV", FI_DIRECTED_RECV},
    {"FI_HMEM", FI_HMEM},
};

constexpr HintName kModeNames[] = {
    {"FI_CONTEXT", FI_CONTEXT},
    {"FI_MSG_PREFIX", FI_MSG_PREFIX},
    {"FI_ASYNC_IOV", FI_ASYNC_IOV},
    {"FI_RX_CQ_DATA", FI_RX_CQ_DATA},
    {"FI_LOCAL_MR", FI_LOCAL_MR},
    {"FI_NOTIFY_FLAGS_ONLY", FI_NOTIFY_FLAGS_ONLY},
    {"FI_RESTRICTED_COMP", FI_RESTRICTED_COMP},
    {"FI_CONTEXT2", FI_CONTEXT2},
};

constexpr HintName kEndpointTypeNames[] = {
    {"FI_EP_UNSPEC", FI_EP_UNSPEC},
    {"FI_EP_MSG", FI_EP_MSG},
    {"FI_EP_DGRAM", FI_EP_DGRAM},
    {"FI_EP_RDM", FI_EP_RDM},
    {"FI_EP_SOCK_STREAM", FI_EP_SOCK_STREAM},
    {"FI_EP_SOCK_DGRAM", FI_EP_SOCK_DGRAM},
};

constexpr HintName kAddressFormatNames[] = {
    {"FI_FORMAT_UNSPEC", FI_FORMAT_UNSPEC},
    {"FI_SOCKADDR", FI_SOCKADDR},
    {"FI_SOCKADDR_IN", FI_SOCKADDR_IN},
    {"FI_SOCKADDR_IN6", FI_SOCKADDR_IN6},
    {"FI_SOCKADDR_IB", FI_SOCKADDR_IB},
    {"FI_ADDR_PSMX", FI_ADDR_PSMX},
    {"FI_ADDR_GNI", FI_ADDR_GNI},
    {"FI_ADDR_BGQ", FI_ADDR_BGQ},
    {"FI_ADDR_MLX", FI_ADDR_MLX},
    {"FI_ADDR_STR", FI_ADDR_STR},
    {"FI_ADDR_PSMX2", FI_ADDR_PSMX2},
    {"FI_ADDR_EFA", FI_ADDR_EFA},
};

template <size_t N>
bool LookUp(const HintName (&names)[N], const std::string& name,
            uint64_t* value) {
  for (const HintName& entry : names) {
    if (strcasecmp(entry.name, name.c_str()) == 0) {
      *value = entry.value;
      return true;
    }
  }
  return false;
}

// How libfabric's fi_info names each kind in its error messages.
const char* KindDescription(HintKind kind) {
  switch (kind) {
    case HintKind::kCapability:
      return "capability";
    case HintKind::kMode:
      return "mode";
    case HintKind::kEndpointType:
      return "endpoint type";
    case HintKind::kAddressFormat:
      return "address format";
  }
  return "name";
}

}  // namespace

bool LookUpHintName(HintKind kind, std::string_view name, uint64_t* value) {
  const std::string name_string(name);
  switch (kind) {
    case HintKind::kCapability:
      return LookUp(kCapabilityNames, name_string, value);
    case HintKind::kMode:
      return LookUp(kModeNames, name_string, value);
    case HintKind::kEndpointType:
      return LookUp(kEndpointTypeNames, name_string, value);
    case HintKind::kAddressFormat:
      return LookUp(kAddressFormatNames, name_string, value);
  }
  return false;
}

bool ParseHintName(HintKind kind, std::string_view text, uint64_t* value,
                   std::ostream& errors) {
  if (LookUpHintName(kind, text, value)) return true;
  errors << "error: Unrecognized " << KindDescription(kind) << ": " << text
         << "\n";
  return false;
}

bool ParseHintNameList(HintKind kind, std::string_view text, uint64_t* flags,
                       std::ostream& errors) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('|', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view name = text.substr(start, end - start);
    if (!name.empty()) {
      uint64_t value = 0;
      if (!ParseHintName(kind, name, &value, errors)) return false;
      *flags |= value;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace fi_info_tool

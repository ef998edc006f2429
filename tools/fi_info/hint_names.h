// Names accepted by fi_info's hint options (-c, -m, -t, -a), as libfabric's
// fi_info accepts them: the same names, compared without regard to case.
#ifndef TOOLS_FI_INFO_HINT_NAMES_H_
#define TOOLS_FI_INFO_HINT_NAMES_H_

#include <cstdint>
#include <ostream>
#include <string_view>

namespace fi_info_tool {

// Which option a name belongs to.
enum class HintKind {
  kCapability,     // -c: FI_MSG, FI_RMA, ...
  kMode,           // -m: FI_CONTEXT, FI_MSG_PREFIX, ...
  kEndpointType,   // -t: FI_EP_MSG, FI_EP_DGRAM, ...
  kAddressFormat,  // -a: FI_SOCKADDR_IN, FI_ADDR_STR, ...
};

// Looks `name` up among the names of `kind` (case-insensitively); on success
// stores its value in *value.
bool LookUpHintName(HintKind kind, std::string_view name, uint64_t* value);

// Parses one name of `kind` (-t, -a). An unknown name is reported on `errors`
// as libfabric's fi_info reports it ("error: Unrecognized endpoint type: X").
bool ParseHintName(HintKind kind, std::string_view text, uint64_t* value,
                   std::ostream& errors);

// Parses "NAME1|NAME2|..." (-c, -m) and ORs the values into *flags. Empty
// names are skipped ("FI_MSG||FI_RMA" and "" are fine); spaces are part of a
// name. Stops at the first unknown name, reported as ParseHintName does.
bool ParseHintNameList(HintKind kind, std::string_view text, uint64_t* flags,
                       std::ostream& errors);

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_HINT_NAMES_H_

// --explain: has the library say why providers do not match the hints.
#ifndef TOOLS_FI_INFO_EXPLAIN_H_
#define TOOLS_FI_INFO_EXPLAIN_H_

namespace fi_info_tool {

inline constexpr char kExplainHelp[] =
    R"(--explain sets FI_LOG_LEVEL=warn and FI_LOG_SUBSYS=core in the
environment (replacing values set there) before fi_info's first libfabric
call. When no provider matches, this project's libfabric then logs each
provider's first unmet hint at warning level, on stderr, e.g.
"tcp: ep_type FI_EP_DGRAM not supported"; another libfabric logs whatever it
logs at that level.
)";

// Sets FI_LOG_LEVEL=warn and FI_LOG_SUBSYS=core. Call before any libfabric
// call: the library reads its logging settings once, when it starts.
void RequestExplanations();

}  // namespace fi_info_tool

#endif  // TOOLS_FI_INFO_EXPLAIN_H_

#include "tools/fi_info/text_output.h"

#include <cstring>

#include "tools/fi_info/tostr_text.h"

namespace fi_info_tool {
namespace {

// What printf's %s prints for a null pointer in glibc.
const char* OrNull(const char* text) {
  return text != nullptr ? text : "(null)";
}

void PrintVersion(uint32_t version, std::ostream& out) {
  out << FI_MAJOR(version) << "." << FI_MINOR(version) << "\n";
}

const char* ParamTypeName(enum fi_param_type type) {
  switch (type) {
    case FI_PARAM_STRING:
      return "String";
    case FI_PARAM_INT:
      return "Integer";
    case FI_PARAM_SIZE_T:
      return "size_t";
    case FI_PARAM_BOOL:
      return "Boolean (0/1, on/off, true/false, yes/no)";
  }
  return "Unknown";
}

}  // namespace

void PrintProviders(const fi_info* list, std::ostream& out) {
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    out << OrNull(info->fabric_attr->prov_name) << ":\n";
    out << "    version: ";
    PrintVersion(info->fabric_attr->prov_version, out);
  }
}

void PrintShortInfo(const fi_info* list, std::ostream& out) {
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    out << "provider: " << OrNull(info->fabric_attr->prov_name) << "\n";
    out << "    fabric: " << OrNull(info->fabric_attr->name) << "\n";
    out << "    domain: " << OrNull(info->domain_attr->name) << "\n";
    out << "    version: ";
    PrintVersion(info->fabric_attr->prov_version, out);
    out << "    type: " << TostrText(&info->ep_attr->type, FI_TYPE_EP_TYPE)
        << "\n";
    out << "    protocol: "
        << TostrText(&info->ep_attr->protocol, FI_TYPE_PROTOCOL) << "\n";
  }
}

void PrintLongInfo(const fi_info* list,
                   const std::optional<std::string>& substring,
                   std::ostream& out) {
  for (const fi_info* info = list; info != nullptr; info = info->next) {
    const std::string text = TostrText(info, FI_TYPE_INFO);
    if (!ContainsIgnoringCase(text.c_str(), substring)) continue;
    out << "---\n" << text;
  }
}

int PrintParams(const std::optional<std::string>& substring,
                std::ostream& out) {
  fi_param* params = nullptr;
  int count = 0;
  const int rc = fi_getparams(&params, &count);
  if (rc != 0) return rc;
  for (int i = 0; i < count; ++i) {
    const fi_param& param = params[i];
    if (!ContainsIgnoringCase(OrNull(param.name), substring)) continue;
    out << "# " << OrNull(param.name) << ": " << ParamTypeName(param.type)
        << "\n";
    out << "# " << OrNull(param.help_string) << "\n";
    if (param.value != nullptr) {
      // A value with a space is quoted. libfabric's fi_info writes a NUL
      // byte where there are no quotes (printf "%c" of '\0'); so does this,
      // for identical output.
      const char delimiter =
          std::strchr(param.value, ' ') != nullptr ? '"' : '\0';
      out << OrNull(param.name) << "=" << delimiter << param.value << delimiter
          << "\n";
    }
    out << "\n";
  }
  fi_freeparams(params);
  return 0;
}

}  // namespace fi_info_tool

// The rules a hints structure must follow on its own, before any provider
// is asked (fi_getinfo(3)): known capability and flag bits, well-formed
// addresses, enum values in range, sizes within limits. A violation is
// -FI_EINVAL (-FI_EBADFLAGS for flags), never -FI_ENODATA.
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include "absl/strings/str_cat.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/hints.h"
#include "fabric/api/core/hints_internal.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace {

using hints_internal::CapsName;
using hints_internal::Unmet;

// Largest auth key we accept in hints; keys are small opaque tokens.
constexpr size_t kMaxAuthKeySize = 4096;
absl::Status Invalid(absl::string_view what) {
  return FiError(FI_EINVAL, absl::StrCat("invalid hints: ", what));
}

absl::Status ValidateCaps(const char* field, uint64_t caps) {
  // Bits that are no capability (FI_REMOTE_CQ_DATA, an operation flag, is
  // a common one): no provider offers them, as libfabric 1.17 answers.
  uint64_t unknown = caps & ~kAllCaps;
  if (unknown != 0) {
    return Unmet(absl::StrCat(field, " has bits that are no capability: 0x",
                              absl::Hex(unknown)));
  }
  struct Requirement {
    uint64_t cap;
    uint64_t needs_one_of;
    const char* rule;
  };
  static constexpr Requirement kRules[] = {
      {FI_READ, FI_RMA | FI_ATOMIC, "FI_READ requires FI_RMA or FI_ATOMIC"},
      {FI_WRITE, FI_RMA | FI_ATOMIC, "FI_WRITE requires FI_RMA or FI_ATOMIC"},
      {FI_REMOTE_READ, FI_RMA | FI_ATOMIC,
       "FI_REMOTE_READ requires FI_RMA or FI_ATOMIC"},
      {FI_REMOTE_WRITE, FI_RMA | FI_ATOMIC,
       "FI_REMOTE_WRITE requires FI_RMA or FI_ATOMIC"},
      {FI_MULTICAST, FI_MSG, "FI_MULTICAST requires FI_MSG"},
      {FI_VARIABLE_MSG, FI_MSG | FI_TAGGED,
       "FI_VARIABLE_MSG requires FI_MSG or FI_TAGGED"},
      {FI_SOURCE_ERR, FI_SOURCE, "FI_SOURCE_ERR requires FI_SOURCE"},
      {FI_RMA_PMEM, FI_RMA, "FI_RMA_PMEM requires FI_RMA"},
      {FI_XPU_TRIGGER, FI_TRIGGER, "FI_XPU requires FI_TRIGGER"},
  };
  // fi_getinfo(3) pairs these, but libfabric 1.17 never checks the pairs:
  // no provider matches, and clients (conformance suites probing one
  // capability at a time) expect -FI_ENODATA, not -FI_EBADFLAGS, which is
  // for fi_getinfo's flags argument and op_flags.
  for (const Requirement& rule : kRules) {
    if ((caps & rule.cap) != 0 && (caps & rule.needs_one_of) == 0) {
      return Unmet(absl::StrCat(field, ": ", rule.rule));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAddress(const char* field, const void* addr,
                             size_t addrlen) {
  if (addr != nullptr && addrlen == 0) {
    return Invalid(absl::StrCat(field, " is set but its length is 0"));
  }
  return absl::OkStatus();
}

// `field` is an enum member of the application's hints (read as an int).
template <typename Enum>
absl::Status ValidateEnum(const char* name, const Enum& field, int max) {
  int value = EnumValue(field);
  if (value >= 0 && value <= max) return absl::OkStatus();
  return Invalid(absl::StrCat(name, " has unknown value ", value));
}

absl::Status ValidateTrafficClass(const char* field, uint32_t tclass) {
  bool known = tclass == FI_TC_UNSPEC ||
               (tclass >= FI_TC_BEST_EFFORT && tclass <= FI_TC_NETWORK_CTRL) ||
               ((tclass & ~0xffu) == FI_TC_DSCP && (tclass & 0xff) < 64);
  if (known) return absl::OkStatus();
  return Invalid(
      absl::StrCat(field, " has unknown traffic class 0x", absl::Hex(tclass)));
}

absl::Status ValidateDomainAttr(const fi_domain_attr& attr, uint32_t version) {
  FABRIC_RETURN_IF_ERROR(ValidateEnum("domain_attr->threading", attr.threading,
                                      FI_THREAD_ENDPOINT));
  FABRIC_RETURN_IF_ERROR(ValidateEnum("domain_attr->control_progress",
                                      attr.control_progress,
                                      FI_PROGRESS_MANUAL));
  FABRIC_RETURN_IF_ERROR(ValidateEnum("domain_attr->data_progress",
                                      attr.data_progress, FI_PROGRESS_MANUAL));
  FABRIC_RETURN_IF_ERROR(ValidateEnum("domain_attr->resource_mgmt",
                                      attr.resource_mgmt, FI_RM_ENABLED));
  FABRIC_RETURN_IF_ERROR(
      ValidateEnum("domain_attr->av_type", attr.av_type, FI_AV_TABLE));
  bool legacy_value =
      attr.mr_mode == FI_MR_BASIC || attr.mr_mode == FI_MR_SCALABLE;
  if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
    if (attr.mr_mode != FI_MR_UNSPEC && !legacy_value) {
      return Invalid(absl::StrCat("domain_attr->mr_mode ", attr.mr_mode,
                                  " is not FI_MR_UNSPEC, FI_MR_BASIC or "
                                  "FI_MR_SCALABLE, as API <= 1.4 requires"));
    }
  }
  // From 1.5 on, mr_mode lists the modes the application can work with;
  // bits we do not know are modes we never require, so they are ignored
  // (libfabric's fi_info passes ~(FI_MR_BASIC | FI_MR_SCALABLE)).
  if ((attr.caps & ~kDomainCaps) != 0) {
    return Unmet(absl::StrCat(
        "domain_attr->caps has bits that are not domain capabilities: ",
        CapsName(attr.caps & ~kDomainCaps)));
  }
  if (attr.auth_key != nullptr && attr.auth_key_size == 0) {
    return Invalid("domain_attr->auth_key is set but auth_key_size is 0");
  }
  if (attr.auth_key_size > kMaxAuthKeySize) {
    return Invalid(absl::StrCat("domain_attr->auth_key_size ",
                                attr.auth_key_size, " is too large"));
  }
  if (attr.cq_data_size > 8) {
    return Invalid(absl::StrCat("domain_attr->cq_data_size ", attr.cq_data_size,
                                " is larger than 8 bytes"));
  }
  return ValidateTrafficClass("domain_attr->tclass", attr.tclass);
}

absl::Status ValidateEpAttr(const fi_ep_attr& attr) {
  FABRIC_RETURN_IF_ERROR(
      ValidateEnum("ep_attr->type", attr.type, FI_EP_SOCK_DGRAM));
  if (attr.auth_key != nullptr && attr.auth_key_size == 0) {
    return Invalid("ep_attr->auth_key is set but auth_key_size is 0");
  }
  if (attr.auth_key_size > kMaxAuthKeySize) {
    return Invalid(absl::StrCat("ep_attr->auth_key_size ", attr.auth_key_size,
                                " is too large"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateHints(const fi_info* hints, uint32_t version) {
  if (hints == nullptr) return absl::OkStatus();
  FABRIC_RETURN_IF_ERROR(ValidateCaps("caps", hints->caps));
  FABRIC_RETURN_IF_ERROR(
      ValidateAddress("src_addr", hints->src_addr, hints->src_addrlen));
  FABRIC_RETURN_IF_ERROR(
      ValidateAddress("dest_addr", hints->dest_addr, hints->dest_addrlen));
  if (hints->addr_format > FI_ADDR_CXI &&
      (hints->addr_format & FI_PROV_SPECIFIC) == 0) {
    return Invalid(
        absl::StrCat("addr_format has unknown value ", hints->addr_format));
  }
  if (hints->tx_attr != nullptr) {
    FABRIC_RETURN_IF_ERROR(ValidateCaps("tx_attr->caps", hints->tx_attr->caps));
    if ((hints->tx_attr->op_flags & ~kTxOpFlags) != 0) {
      return FiError(FI_EBADFLAGS,
                     "invalid hints: tx_attr->op_flags has bits "
                     "that are not transmit flags");
    }
    FABRIC_RETURN_IF_ERROR(
        ValidateTrafficClass("tx_attr->tclass", hints->tx_attr->tclass));
  }
  if (hints->rx_attr != nullptr) {
    FABRIC_RETURN_IF_ERROR(ValidateCaps("rx_attr->caps", hints->rx_attr->caps));
    if ((hints->rx_attr->op_flags & ~kRxOpFlags) != 0) {
      return FiError(FI_EBADFLAGS,
                     "invalid hints: rx_attr->op_flags has bits "
                     "that are not receive flags");
    }
  }
  if (hints->ep_attr != nullptr) {
    FABRIC_RETURN_IF_ERROR(ValidateEpAttr(*hints->ep_attr));
  }
  if (hints->domain_attr != nullptr) {
    FABRIC_RETURN_IF_ERROR(ValidateDomainAttr(*hints->domain_attr, version));
  }
  return absl::OkStatus();
}

}  // namespace fabric

#include "fabric/api/core/hints.h"

#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fabric/api/core/enum_value.h"
#include "fabric/api/core/hints_internal.h"
#include "fabric/api/core/status.h"

namespace fabric {
namespace hints_internal {

std::string TypeName(const void* value, fi_type type) {
  char buf[1024];
  const char* text = fi_tostr_r(buf, sizeof(buf), value, type);
  return text != nullptr ? std::string(text) : std::string("?");
}

std::string CapsName(uint64_t caps) { return TypeName(&caps, FI_TYPE_CAPS); }

absl::Status Unmet(absl::string_view what) {
  return FiError(FI_ENODATA, what);
}

}  // namespace hints_internal

namespace {

using hints_internal::CapsName;
using hints_internal::TypeName;
using hints_internal::Unmet;

// FI_MR_BASIC of API <= 1.4 means these three bits in later versions.
constexpr int kBasicMrBits = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

// Checks that the application asked for at most what the candidate offers.
absl::Status AtMost(const char* field, size_t requested, size_t offered) {
  if (requested <= offered) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " ", requested, " exceeds the maximum ",
                            offered));
}

absl::Status EnumSupported(const char* field, int value, uint32_t supported,
                           const std::string& name) {
  if (value == 0 || (supported & Bit(value)) != 0) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " ", name, " not supported"));
}

// Output caps for a request: primary caps as requested, modifiers as requested
// (all relevant ones when none given), secondary caps as requested plus the
// cheap ones the candidate has.
uint64_t OutputCaps(uint64_t offered, uint64_t requested) {
  if (requested == 0) return offered & ~kCostlySecondaryCaps;
  uint64_t caps = requested & (kPrimaryCaps | kSecondaryCaps);
  uint64_t msg_mods = requested & kMsgModifiers;
  uint64_t rma_mods = requested & kRmaModifiers;
  if (msg_mods == 0) msg_mods = kMsgModifiers;
  if (rma_mods == 0) rma_mods = kRmaModifiers;
  if ((requested & (FI_MSG | FI_TAGGED | FI_MULTICAST | FI_COLLECTIVE)) != 0) {
    caps |= msg_mods;
  }
  if ((requested & (FI_RMA | FI_ATOMIC)) != 0) caps |= rma_mods;
  caps |= offered & kSecondaryCaps & ~kCostlySecondaryCaps;
  return caps & offered;
}

absl::Status CheckCaps(const char* field, uint64_t offered,
                       uint64_t requested) {
  uint64_t missing = requested & ~offered;
  if (missing == 0) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " ", CapsName(missing), " not supported"));
}

absl::Status CheckModes(const char* field, uint64_t required,
                        uint64_t app_modes) {
  uint64_t missing = required & ~app_modes;
  if (missing == 0) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " requires mode ",
                            TypeName(&missing, FI_TYPE_MODE),
                            " which the application does not support"));
}

absl::Status CheckOrder(const char* field, uint64_t offered,
                        uint64_t requested) {
  uint64_t missing = requested & ~offered;
  if (missing == 0) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " ", TypeName(&missing, FI_TYPE_MSG_ORDER),
                            " not supported"));
}

absl::Status CheckOpFlags(const char* field, uint64_t supported,
                          uint64_t requested) {
  uint64_t missing = requested & ~supported;
  if (missing == 0) return absl::OkStatus();
  return Unmet(absl::StrCat(field, " ", TypeName(&missing, FI_TYPE_OP_FLAGS),
                            " not supported"));
}

// Whether an application speaks of memory registration in the terms of
// API 1.4: that API, or a later one with hints' mr_mode exactly FI_MR_BASIC
// or FI_MR_SCALABLE. libfabric answers those with the same legacy value
// (fi_mr(3)), which old applications compare against.
bool LegacyMrMode(uint32_t version, int app_mode) {
  return FI_VERSION_LT(version, FI_VERSION(1, 5)) || app_mode == FI_MR_BASIC ||
         app_mode == FI_MR_SCALABLE;
}

// Output mr_mode for an application that accepts `app_mode` (API >= 1.5).
absl::StatusOr<int> MatchMrMode(const AttrSupport& support, int app_mode) {
  int missing = support.mr_mode_required & ~app_mode;
  if (missing != 0) {
    return Unmet(absl::StrCat("domain_attr->mr_mode requires ",
                              TypeName(&missing, FI_TYPE_MR_MODE),
                              " which the application does not support"));
  }
  return support.mr_mode_required | (app_mode & support.mr_mode_optional);
}

// Legacy mr_mode (LegacyMrMode): FI_MR_UNSPEC, FI_MR_BASIC or
// FI_MR_SCALABLE.
absl::StatusOr<int> MatchLegacyMrMode(const AttrSupport& support,
                                      int app_mode) {
  // Basic mode is the provider choosing keys and virtual addressing; a
  // provider can serve it when it needs nothing else from the application.
  bool can_basic =
      (support.mr_mode_required & ~kBasicMrBits & ~FI_MR_LOCAL) == 0 &&
      (support.mr_mode_optional & kBasicMrBits) == kBasicMrBits;
  bool can_scalable = (support.mr_mode_required & ~FI_MR_LOCAL) == 0;
  if (app_mode == FI_MR_BASIC) {
    if (can_basic) return FI_MR_BASIC;
    return Unmet("domain_attr->mr_mode FI_MR_BASIC not supported");
  }
  if (app_mode == FI_MR_SCALABLE) {
    if (can_scalable) return FI_MR_SCALABLE;
    return Unmet("domain_attr->mr_mode FI_MR_SCALABLE not supported");
  }
  if (can_scalable) return FI_MR_SCALABLE;
  if (can_basic) return FI_MR_BASIC;
  return Unmet("domain_attr->mr_mode has no API 1.4 equivalent");
}

// Matches what fi_tx_attr and fi_rx_attr share (their first five fields) and
// copies `offered` to `out` with the caps and op_flags the application gets.
template <typename QueueAttr>
absl::Status MatchQueueAttr(absl::string_view name, const QueueAttr& offered,
                            uint64_t supported_op_flags, const QueueAttr& hint,
                            uint64_t app_mode, uint64_t caps, QueueAttr* out) {
  auto field = [name](const char* member) {
    return absl::StrCat(name, "->", member);
  };
  FABRIC_RETURN_IF_ERROR(
      CheckCaps(field("caps").c_str(), offered.caps, hint.caps));
  FABRIC_RETURN_IF_ERROR(CheckModes(std::string(name).c_str(), offered.mode,
                                    hint.mode ? hint.mode : app_mode));
  FABRIC_RETURN_IF_ERROR(CheckOpFlags(field("op_flags").c_str(),
                                      supported_op_flags, hint.op_flags));
  FABRIC_RETURN_IF_ERROR(CheckOrder(field("msg_order").c_str(),
                                    offered.msg_order, hint.msg_order));
  FABRIC_RETURN_IF_ERROR(CheckOrder(field("comp_order").c_str(),
                                    offered.comp_order, hint.comp_order));
  FABRIC_RETURN_IF_ERROR(
      AtMost(field("size").c_str(), hint.size, offered.size));
  FABRIC_RETURN_IF_ERROR(
      AtMost(field("iov_limit").c_str(), hint.iov_limit, offered.iov_limit));
  *out = offered;
  out->caps = hint.caps ? OutputCaps(offered.caps, hint.caps)
                        : caps & offered.caps;
  out->op_flags = hint.op_flags;
  return absl::OkStatus();
}

absl::Status MatchTxAttr(const fi_tx_attr& offered, const AttrSupport& support,
                         const fi_tx_attr& hint, uint64_t app_mode,
                         uint64_t caps, fi_tx_attr* out) {
  FABRIC_RETURN_IF_ERROR(
      AtMost("tx_attr->inject_size", hint.inject_size, offered.inject_size));
  FABRIC_RETURN_IF_ERROR(AtMost("tx_attr->rma_iov_limit", hint.rma_iov_limit,
                                offered.rma_iov_limit));
  if (hint.tclass != FI_TC_UNSPEC && !support.traffic_class) {
    return Unmet("tx_attr->tclass not supported");
  }
  FABRIC_RETURN_IF_ERROR(MatchQueueAttr("tx_attr", offered,
                                        support.tx_op_flags, hint, app_mode,
                                        caps, out));
  if (hint.tclass != FI_TC_UNSPEC) out->tclass = hint.tclass;
  return absl::OkStatus();
}

absl::Status MatchRxAttr(const fi_rx_attr& offered, const AttrSupport& support,
                         const fi_rx_attr& hint, uint64_t app_mode,
                         uint64_t caps, fi_rx_attr* out) {
  FABRIC_RETURN_IF_ERROR(AtMost("rx_attr->total_buffered_recv",
                                hint.total_buffered_recv,
                                offered.total_buffered_recv));
  return MatchQueueAttr("rx_attr", offered, support.rx_op_flags, hint,
                        app_mode, caps, out);
}

absl::Status CopyAuthKey(const uint8_t* key, size_t size, uint8_t** out_key,
                         size_t* out_size) {
  if (key == nullptr || size == 0) return absl::OkStatus();
  void* copy = nullptr;
  if (!SetAddress(&copy, out_size, key, size)) {
    return FiError(FI_ENOMEM, "out of memory copying an auth key");
  }
  *out_key = static_cast<uint8_t*>(copy);
  return absl::OkStatus();
}

absl::Status MatchContextCount(const char* field, size_t requested,
                               size_t per_ep_max, size_t shared_max) {
  if (requested == FI_SHARED_CONTEXT) {
    if (shared_max > 0) return absl::OkStatus();
    return Unmet(absl::StrCat(field, " FI_SHARED_CONTEXT not supported"));
  }
  return AtMost(field, requested, per_ep_max);
}

absl::Status MatchEpAttr(const fi_info& candidate, const AttrSupport& support,
                         const fi_ep_attr& hint, fi_info* out) {
  const fi_ep_attr& offered = *candidate.ep_attr;
  if (hint.type != FI_EP_UNSPEC && hint.type != offered.type) {
    return Unmet(absl::StrCat("ep_type ", TypeName(&hint.type, FI_TYPE_EP_TYPE),
                              " not supported"));
  }
  if (hint.protocol != FI_PROTO_UNSPEC && hint.protocol != offered.protocol) {
    return Unmet(absl::StrCat("protocol ",
                              TypeName(&hint.protocol, FI_TYPE_PROTOCOL),
                              " not supported"));
  }
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->protocol_version",
                                hint.protocol_version,
                                offered.protocol_version));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->max_msg_size", hint.max_msg_size,
                                offered.max_msg_size));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->msg_prefix_size",
                                hint.msg_prefix_size, offered.msg_prefix_size));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->max_order_raw_size",
                                hint.max_order_raw_size,
                                offered.max_order_raw_size));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->max_order_war_size",
                                hint.max_order_war_size,
                                offered.max_order_war_size));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->max_order_waw_size",
                                hint.max_order_waw_size,
                                offered.max_order_waw_size));
  if ((hint.mem_tag_format & ~offered.mem_tag_format) != 0) {
    return Unmet(absl::StrCat("ep_attr->mem_tag_format 0x",
                              absl::Hex(hint.mem_tag_format),
                              " uses tag bits not supported"));
  }
  const fi_domain_attr& domain = *candidate.domain_attr;
  FABRIC_RETURN_IF_ERROR(MatchContextCount("ep_attr->tx_ctx_cnt",
                                           hint.tx_ctx_cnt,
                                           domain.max_ep_tx_ctx,
                                           domain.max_ep_stx_ctx));
  FABRIC_RETURN_IF_ERROR(MatchContextCount("ep_attr->rx_ctx_cnt",
                                           hint.rx_ctx_cnt,
                                           domain.max_ep_rx_ctx,
                                           domain.max_ep_srx_ctx));
  FABRIC_RETURN_IF_ERROR(AtMost("ep_attr->auth_key_size", hint.auth_key_size,
                                support.max_auth_key_size));
  fi_ep_attr* attr = out->ep_attr;
  free(attr->auth_key);
  *attr = offered;
  attr->auth_key = nullptr;
  attr->auth_key_size = 0;
  if (hint.mem_tag_format != 0) attr->mem_tag_format = hint.mem_tag_format;
  if (hint.tx_ctx_cnt == FI_SHARED_CONTEXT) attr->tx_ctx_cnt = FI_SHARED_CONTEXT;
  if (hint.rx_ctx_cnt == FI_SHARED_CONTEXT) attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
  return CopyAuthKey(hint.auth_key, hint.auth_key_size, &attr->auth_key,
                     &attr->auth_key_size);
}

absl::Status MatchDomainAttr(const fi_domain_attr& offered,
                             const AttrSupport& support,
                             const fi_domain_attr& hint, uint32_t version,
                             fi_domain_attr* out) {
  if (hint.name != nullptr &&
      (offered.name == nullptr || strcmp(hint.name, offered.name) != 0)) {
    return Unmet(absl::StrCat("domain name '", hint.name, "' not found"));
  }
  FABRIC_RETURN_IF_ERROR(
      EnumSupported("threading", hint.threading, support.threading,
                    TypeName(&hint.threading, FI_TYPE_THREADING)));
  FABRIC_RETURN_IF_ERROR(EnumSupported(
      "control_progress", hint.control_progress, support.progress,
      TypeName(&hint.control_progress, FI_TYPE_PROGRESS)));
  FABRIC_RETURN_IF_ERROR(EnumSupported(
      "data_progress", hint.data_progress, support.progress,
      TypeName(&hint.data_progress, FI_TYPE_PROGRESS)));
  FABRIC_RETURN_IF_ERROR(EnumSupported(
      "resource_mgmt", hint.resource_mgmt, support.resource_mgmt,
      hint.resource_mgmt == FI_RM_ENABLED ? "FI_RM_ENABLED"
                                          : "FI_RM_DISABLED"));
  FABRIC_RETURN_IF_ERROR(EnumSupported("av_type", hint.av_type,
                                       support.av_types,
                                       TypeName(&hint.av_type,
                                                FI_TYPE_AV_TYPE)));
  absl::StatusOr<int> mr_mode =
      LegacyMrMode(version, hint.mr_mode)
          ? MatchLegacyMrMode(support, hint.mr_mode)
          : MatchMrMode(support, hint.mr_mode);
  if (!mr_mode.ok()) return mr_mode.status();
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->mr_key_size", hint.mr_key_size, offered.mr_key_size));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->cq_data_size", hint.cq_data_size,
                                offered.cq_data_size));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->cq_cnt", hint.cq_cnt, offered.cq_cnt));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->ep_cnt", hint.ep_cnt, offered.ep_cnt));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->tx_ctx_cnt", hint.tx_ctx_cnt, offered.tx_ctx_cnt));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->rx_ctx_cnt", hint.rx_ctx_cnt, offered.rx_ctx_cnt));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->max_ep_tx_ctx",
                                hint.max_ep_tx_ctx, offered.max_ep_tx_ctx));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->max_ep_rx_ctx",
                                hint.max_ep_rx_ctx, offered.max_ep_rx_ctx));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->max_ep_stx_ctx",
                                hint.max_ep_stx_ctx, offered.max_ep_stx_ctx));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->max_ep_srx_ctx",
                                hint.max_ep_srx_ctx, offered.max_ep_srx_ctx));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->cntr_cnt", hint.cntr_cnt, offered.cntr_cnt));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->mr_iov_limit", hint.mr_iov_limit,
                                offered.mr_iov_limit));
  FABRIC_RETURN_IF_ERROR(
      AtMost("domain_attr->mr_cnt", hint.mr_cnt, offered.mr_cnt));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->max_err_data", hint.max_err_data,
                                offered.max_err_data));
  FABRIC_RETURN_IF_ERROR(AtMost("domain_attr->auth_key_size",
                                hint.auth_key_size, support.max_auth_key_size));
  FABRIC_RETURN_IF_ERROR(
      CheckCaps("domain_attr->caps", offered.caps, hint.caps));
  FABRIC_RETURN_IF_ERROR(
      CheckModes("domain_attr", offered.mode, hint.mode));
  if (hint.tclass != FI_TC_UNSPEC && !support.traffic_class) {
    return Unmet("domain_attr->tclass not supported");
  }

  char* name = out->name;  // already owned by `out`
  free(out->auth_key);
  *out = offered;
  out->name = name;
  out->auth_key = nullptr;
  out->auth_key_size = 0;
  if (hint.threading != FI_THREAD_UNSPEC) out->threading = hint.threading;
  if (hint.control_progress != FI_PROGRESS_UNSPEC) {
    out->control_progress = hint.control_progress;
  }
  if (hint.data_progress != FI_PROGRESS_UNSPEC) {
    out->data_progress = hint.data_progress;
  }
  if (hint.resource_mgmt != FI_RM_UNSPEC) {
    out->resource_mgmt = hint.resource_mgmt;
  }
  if (hint.av_type != FI_AV_UNSPEC) out->av_type = hint.av_type;
  out->mr_mode = *mr_mode;
  out->mode = offered.mode;
  if (hint.tclass != FI_TC_UNSPEC) out->tclass = hint.tclass;
  return CopyAuthKey(hint.auth_key, hint.auth_key_size, &out->auth_key,
                     &out->auth_key_size);
}

absl::Status MatchFabricAttr(const fi_fabric_attr& offered,
                             const fi_fabric_attr& hint) {
  if (hint.name != nullptr &&
      (offered.name == nullptr || strcmp(hint.name, offered.name) != 0)) {
    return Unmet(absl::StrCat("fabric name '", hint.name, "' not found"));
  }
  if (hint.prov_name != nullptr &&
      !ProviderNameMatches(hint.prov_name, offered.prov_name)) {
    return Unmet(absl::StrCat("prov_name '", hint.prov_name,
                              "' does not name this provider"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InfoPtr> MatchHints(const fi_info& candidate,
                                   const AttrSupport& support,
                                   const fi_info* hints, uint32_t version) {
  InfoPtr out = DupInfo(candidate);
  if (out == nullptr) return FiError(FI_ENOMEM, "out of memory");
  out->next = nullptr;
  const fi_info empty_hints = {};
  const fi_info& h = hints != nullptr ? *hints : empty_hints;

  FABRIC_RETURN_IF_ERROR(CheckCaps("caps", candidate.caps, h.caps));
  uint64_t app_mode = hints != nullptr ? h.mode : ~0ULL;
  FABRIC_RETURN_IF_ERROR(CheckModes("info", candidate.mode, app_mode));
  if (h.addr_format != FI_FORMAT_UNSPEC &&
      h.addr_format != candidate.addr_format) {
    return Unmet(absl::StrCat("addr_format ",
                              TypeName(&h.addr_format, FI_TYPE_ADDR_FORMAT),
                              " not supported"));
  }
  out->caps = OutputCaps(candidate.caps, h.caps);
  out->mode = hints != nullptr ? candidate.mode & h.mode : candidate.mode;

  const fi_tx_attr no_tx = {};
  const fi_rx_attr no_rx = {};
  const fi_ep_attr no_ep = {};
  const fi_domain_attr no_domain = {};
  const fi_fabric_attr no_fabric = {};
  FABRIC_RETURN_IF_ERROR(MatchTxAttr(
      *candidate.tx_attr, support, h.tx_attr ? *h.tx_attr : no_tx, app_mode,
      out->caps, out->tx_attr));
  FABRIC_RETURN_IF_ERROR(MatchRxAttr(
      *candidate.rx_attr, support, h.rx_attr ? *h.rx_attr : no_rx, app_mode,
      out->caps, out->rx_attr));
  FABRIC_RETURN_IF_ERROR(MatchEpAttr(candidate, support,
                                     h.ep_attr ? *h.ep_attr : no_ep,
                                     out.get()));
  FABRIC_RETURN_IF_ERROR(MatchDomainAttr(
      *candidate.domain_attr, support,
      h.domain_attr ? *h.domain_attr : no_domain, version, out->domain_attr));
  FABRIC_RETURN_IF_ERROR(MatchFabricAttr(
      *candidate.fabric_attr, h.fabric_attr ? *h.fabric_attr : no_fabric));

  int hint_mr_mode = h.domain_attr ? h.domain_attr->mr_mode : FI_MR_UNSPEC;
  if (LegacyMrMode(version, hint_mr_mode) &&
      (support.mr_mode_required & FI_MR_LOCAL) != 0) {
    // In legacy terms local registration is the FI_LOCAL_MR mode bit.
    if (hints != nullptr && (h.mode & FI_LOCAL_MR) == 0) {
      return Unmet("mode FI_LOCAL_MR required by the provider");
    }
    out->mode |= FI_LOCAL_MR;
  }
  // The modes left set are those the provider needs of the application.
  out->tx_attr->mode = out->tx_attr->mode & app_mode;
  out->rx_attr->mode = out->rx_attr->mode & app_mode;
  out->domain_attr->caps =
      (candidate.domain_attr->caps & ~FI_SHARED_AV) |
      (h.domain_attr ? h.domain_attr->caps & FI_SHARED_AV : 0) |
      (out->caps & FI_SHARED_AV);
  return out;
}

bool ProviderNameMatches(const char* hint_prov_name, const char* name) {
  if (hint_prov_name == nullptr) return true;
  if (name == nullptr) return false;
  bool named = false;
  for (absl::string_view part : absl::StrSplit(hint_prov_name, ';')) {
    if (part == "ofi_rxm" || part == "ofi_rxd") continue;
    if (!absl::EqualsIgnoreCase(part, name)) return false;
    named = true;
  }
  return named;
}

}  // namespace fabric

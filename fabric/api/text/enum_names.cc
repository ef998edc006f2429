// Names of scalar enum values, as libfabric 1.17's fi_tostr prints them.
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_trigger.h>
#include <rdma/providers/fi_log.h>

#include "fabric/api/text/printers.h"

namespace fabric::text {
namespace {

struct NamedValue {
  int64_t value;
  const char* name;
};

#define NAMED(value) \
  { value, #value }

template <size_t N>
const char* Find(const NamedValue (&table)[N], int64_t value) {
  for (const NamedValue& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "Unknown";
}

constexpr NamedValue kEpTypes[] = {
    NAMED(FI_EP_UNSPEC), NAMED(FI_EP_MSG),         NAMED(FI_EP_DGRAM),
    NAMED(FI_EP_RDM),    NAMED(FI_EP_SOCK_STREAM), NAMED(FI_EP_SOCK_DGRAM),
};

constexpr NamedValue kAddrFormats[] = {
    NAMED(FI_FORMAT_UNSPEC), NAMED(FI_SOCKADDR),    NAMED(FI_SOCKADDR_IN),
    NAMED(FI_SOCKADDR_IN6),  NAMED(FI_SOCKADDR_IB), NAMED(FI_ADDR_PSMX),
    NAMED(FI_ADDR_GNI),      NAMED(FI_ADDR_BGQ),    NAMED(FI_ADDR_MLX),
    NAMED(FI_ADDR_STR),      NAMED(FI_ADDR_PSMX2),  NAMED(FI_ADDR_IB_UD),
    NAMED(FI_ADDR_EFA),      NAMED(FI_ADDR_PSMX3),  NAMED(FI_ADDR_OPX),
    NAMED(FI_ADDR_CXI),
};

constexpr NamedValue kThreadings[] = {
    NAMED(FI_THREAD_UNSPEC),     NAMED(FI_THREAD_SAFE),
    NAMED(FI_THREAD_FID),        NAMED(FI_THREAD_DOMAIN),
    NAMED(FI_THREAD_COMPLETION), NAMED(FI_THREAD_ENDPOINT),
};

constexpr NamedValue kProgresses[] = {
    NAMED(FI_PROGRESS_UNSPEC),
    NAMED(FI_PROGRESS_AUTO),
    NAMED(FI_PROGRESS_MANUAL),
};

constexpr NamedValue kResourceMgmts[] = {
    NAMED(FI_RM_UNSPEC),
    NAMED(FI_RM_DISABLED),
    NAMED(FI_RM_ENABLED),
};

// FI_PROTO_MXM and FI_PROTO_MRAIL have no name in libfabric 1.17's output.
constexpr NamedValue kProtocols[] = {
    NAMED(FI_PROTO_UNSPEC),   NAMED(FI_PROTO_RDMA_CM_IB_RC),
    NAMED(FI_PROTO_IWARP),    NAMED(FI_PROTO_IB_UD),
    NAMED(FI_PROTO_PSMX),     NAMED(FI_PROTO_UDP),
    NAMED(FI_PROTO_SOCK_TCP), NAMED(FI_PROTO_IWARP_RDM),
    NAMED(FI_PROTO_IB_RDM),   NAMED(FI_PROTO_GNI),
    NAMED(FI_PROTO_RXM),      NAMED(FI_PROTO_RXD),
    NAMED(FI_PROTO_MLX),      NAMED(FI_PROTO_NETWORKDIRECT),
    NAMED(FI_PROTO_PSMX2),    NAMED(FI_PROTO_SHM),
    NAMED(FI_PROTO_RSTREAM),  NAMED(FI_PROTO_RDMA_CM_IB_XRC),
    NAMED(FI_PROTO_EFA),      NAMED(FI_PROTO_PSMX3),
    NAMED(FI_PROTO_RXM_TCP),  NAMED(FI_PROTO_OPX),
    NAMED(FI_PROTO_CXI),      NAMED(FI_PROTO_XNET),
};

constexpr NamedValue kAvTypes[] = {
    NAMED(FI_AV_UNSPEC),
    NAMED(FI_AV_MAP),
    NAMED(FI_AV_TABLE),
};

constexpr NamedValue kAtomicTypes[] = {
    NAMED(FI_INT8),          NAMED(FI_UINT8),
    NAMED(FI_INT16),         NAMED(FI_UINT16),
    NAMED(FI_INT32),         NAMED(FI_UINT32),
    NAMED(FI_INT64),         NAMED(FI_UINT64),
    NAMED(FI_FLOAT),         NAMED(FI_DOUBLE),
    NAMED(FI_FLOAT_COMPLEX), NAMED(FI_DOUBLE_COMPLEX),
    NAMED(FI_LONG_DOUBLE),   NAMED(FI_LONG_DOUBLE_COMPLEX),
    NAMED(FI_INT128),        NAMED(FI_UINT128),
};

constexpr NamedValue kAtomicOps[] = {
    NAMED(FI_MIN),      NAMED(FI_MAX),         NAMED(FI_SUM),
    NAMED(FI_PROD),     NAMED(FI_LOR),         NAMED(FI_LAND),
    NAMED(FI_BOR),      NAMED(FI_BAND),        NAMED(FI_LXOR),
    NAMED(FI_BXOR),     NAMED(FI_ATOMIC_READ), NAMED(FI_ATOMIC_WRITE),
    NAMED(FI_CSWAP),    NAMED(FI_CSWAP_NE),    NAMED(FI_CSWAP_LE),
    NAMED(FI_CSWAP_LT), NAMED(FI_CSWAP_GE),    NAMED(FI_CSWAP_GT),
    NAMED(FI_MSWAP),
};

constexpr NamedValue kEqEvents[] = {
    NAMED(FI_NOTIFY),        NAMED(FI_CONNREQ),     NAMED(FI_CONNECTED),
    NAMED(FI_SHUTDOWN),      NAMED(FI_MR_COMPLETE), NAMED(FI_AV_COMPLETE),
    NAMED(FI_JOIN_COMPLETE),
};

constexpr NamedValue kOpTypes[] = {
    NAMED(FI_OP_RECV),           NAMED(FI_OP_SEND),
    NAMED(FI_OP_TRECV),          NAMED(FI_OP_TSEND),
    NAMED(FI_OP_READ),           NAMED(FI_OP_WRITE),
    NAMED(FI_OP_ATOMIC),         NAMED(FI_OP_FETCH_ATOMIC),
    NAMED(FI_OP_COMPARE_ATOMIC), NAMED(FI_OP_CNTR_SET),
    NAMED(FI_OP_CNTR_ADD),
};

constexpr NamedValue kCollectiveOps[] = {
    NAMED(FI_BARRIER),   NAMED(FI_BROADCAST), NAMED(FI_ALLTOALL),
    NAMED(FI_ALLREDUCE), NAMED(FI_ALLGATHER), NAMED(FI_REDUCE_SCATTER),
    NAMED(FI_REDUCE),    NAMED(FI_SCATTER),   NAMED(FI_GATHER),
};

constexpr NamedValue kHmemIfaces[] = {
    NAMED(FI_HMEM_SYSTEM), NAMED(FI_HMEM_CUDA),   NAMED(FI_HMEM_ROCR),
    NAMED(FI_HMEM_ZE),     NAMED(FI_HMEM_NEURON), NAMED(FI_HMEM_SYNAPSEAI),
};

constexpr NamedValue kCqFormats[] = {
    NAMED(FI_CQ_FORMAT_UNSPEC), NAMED(FI_CQ_FORMAT_CONTEXT),
    NAMED(FI_CQ_FORMAT_MSG),    NAMED(FI_CQ_FORMAT_DATA),
    NAMED(FI_CQ_FORMAT_TAGGED),
};

#undef NAMED

constexpr NamedValue kLogLevels[] = {
    {FI_LOG_WARN, "warn"},
    {FI_LOG_TRACE, "trace"},
    {FI_LOG_INFO, "info"},
    {FI_LOG_DEBUG, "debug"},
};

constexpr NamedValue kLogSubsystems[] = {
    {FI_LOG_CORE, "core"},       {FI_LOG_FABRIC, "fabric"},
    {FI_LOG_DOMAIN, "domain"},   {FI_LOG_EP_CTRL, "ep_ctrl"},
    {FI_LOG_EP_DATA, "ep_data"}, {FI_LOG_AV, "av"},
    {FI_LOG_CQ, "cq"},           {FI_LOG_EQ, "eq"},
    {FI_LOG_MR, "mr"},           {FI_LOG_CNTR, "cntr"},
};

constexpr char kProviderSpecific[] = "Provider specific";

}  // namespace

const char* EpTypeName(int value) { return Find(kEpTypes, value); }

const char* AddrFormatName(uint32_t value) {
  if ((value & FI_PROV_SPECIFIC) != 0) return kProviderSpecific;
  return Find(kAddrFormats, value);
}

const char* ThreadingName(int value) { return Find(kThreadings, value); }
const char* ProgressName(int value) { return Find(kProgresses, value); }
const char* ResourceMgmtName(int value) { return Find(kResourceMgmts, value); }

const char* ProtocolName(uint32_t value) {
  if ((value & FI_PROV_SPECIFIC) != 0) return kProviderSpecific;
  return Find(kProtocols, value);
}

const char* AvTypeName(int value) { return Find(kAvTypes, value); }
const char* AtomicTypeName(int value) { return Find(kAtomicTypes, value); }
const char* AtomicOpName(int value) { return Find(kAtomicOps, value); }
const char* EqEventName(int value) { return Find(kEqEvents, value); }
const char* OpTypeName(int value) { return Find(kOpTypes, value); }
const char* CollectiveOpName(int value) { return Find(kCollectiveOps, value); }
const char* HmemIfaceName(int value) { return Find(kHmemIfaces, value); }
const char* CqFormatName(int value) { return Find(kCqFormats, value); }
const char* LogLevelName(int value) { return Find(kLogLevels, value); }
const char* LogSubsysName(int value) { return Find(kLogSubsystems, value); }

}  // namespace fabric::text

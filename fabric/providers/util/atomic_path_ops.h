// File: fabric/providers/util/atomic_path_ops.h
//
// The fi_atomic table of an endpoint, built from a provider's few functions
// as data_path_ops.h builds fi_msg, fi_tagged and fi_rma: each of the
// twelve C entry points (fi_atomic, fi_atomicv, fi_atomicmsg,
// fi_inject_atomic, their fetch and compare forms) becomes one AtomicCall.
//
//   struct MyCalls {
//     static ssize_t Atomic(fid_ep*, const AtomicCall&);
//     // fi_atomicvalid & co.: 0 with *count the elements one call takes,
//     // or a negative fi_errno.
//     static int AtomicValid(fid_ep*, AtomicKind, fi_datatype, fi_op,
//                            size_t* count);
//     static uint64_t TxFlags(fid_ep*);
//     static const fi_provider* Log(fid_ep*);
//   };
//   fi_ops_atomic kMyAtomicOps = AtomicOps<MyCalls>();
//
// A divert (kMayDivert, Divert) works as in data_path_ops.h.
#ifndef FABRIC_PROVIDERS_UTIL_ATOMIC_PATH_OPS_H_
#define FABRIC_PROVIDERS_UTIL_ATOMIC_PATH_OPS_H_

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <sys/types.h>

#include <cstdint>

#include "fabric/api/core/enum_value.h"
#include "fabric/providers/util/data_path_ops.h"

namespace fabric {

// The three families of atomic calls (fi_query_atomic's flags 0,
// FI_FETCH_ATOMIC and FI_COMPARE_ATOMIC); each takes its own operations.
// The values travel on the wire of stream endpoints.
enum class AtomicKind : uint8_t {
  kWrite = 0,    // fi_atomic
  kFetch = 1,    // fi_fetch_atomic
  kCompare = 2,  // fi_compare_atomic
};

// A list of elements as the calls give it.
struct IocList {
  const fi_ioc* ioc = nullptr;
  void** desc = nullptr;
  size_t count = 0;
};

// An atomic as the application's call gave it.
struct AtomicCall {
  AtomicKind kind;
  const char* name;  // "fi_atomic", ...: for the log
  IocList operands;
  IocList compare;  // kCompare
  IocList result;   // kFetch and kCompare: where the old values go
  fi_addr_t dest;
  const fi_rma_ioc* rma = nullptr;
  size_t rma_count = 0;
  // The application's values, unchecked (EnumValue): the provider checks
  // them against the enumerators before it converts them.
  int datatype = FI_INT8;
  int op = FI_MIN;
  uint64_t data = 0;
  void* context = nullptr;
  uint64_t flags = 0;        // the call's, or the endpoint's op_flags
  bool msg_call = false;     // fi_atomicmsg & co.
  bool inject_call = false;  // fi_inject_atomic: no completion entry
};

namespace data_path_internal {

inline size_t Elements(const fi_ioc* ioc, size_t count) {
  size_t total = 0;
  for (size_t i = 0; ioc != nullptr && i < count; ++i) total += ioc[i].count;
  return total;
}

template <typename Calls>
struct AtomicEntries {
  using K = AtomicKind;

  // --- fi_atomic ---
  static ssize_t Write(fid_ep* ep, const void* buf, size_t count, void* desc,
                       fi_addr_t dest, uint64_t addr, uint64_t key,
                       fi_datatype datatype, fi_op op, void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::atomic,
                                  &fi_ops_atomic::write, buf, count, desc, dest,
                                  addr, key, datatype, op, context)) {
      return *rc;
    }
    fi_ioc operand = {const_cast<void*>(buf), count};
    fi_rma_ioc rma = {addr, count, key};
    return Calls::Atomic(ep, {K::kWrite,
                              "fi_atomic",
                              {&operand, &desc, 1},
                              {},
                              {},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Writev(fid_ep* ep, const fi_ioc* iov, void** desc,
                        size_t count, fi_addr_t dest, uint64_t addr,
                        uint64_t key, fi_datatype datatype, fi_op op,
                        void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::atomic,
                                  &fi_ops_atomic::writev, iov, desc, count,
                                  dest, addr, key, datatype, op, context)) {
      return *rc;
    }
    fi_rma_ioc rma = {addr, Elements(iov, count), key};
    return Calls::Atomic(ep, {K::kWrite,
                              "fi_atomicv",
                              {iov, desc, count},
                              {},
                              {},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Writemsg(fid_ep* ep, const fi_msg_atomic* msg,
                          uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::atomic,
                                  &fi_ops_atomic::writemsg, msg, flags)) {
      return *rc;
    }
    if (ssize_t rc = CheckRemoteMsg<Calls>(ep, msg, "fi_atomicmsg"); rc != 0) {
      return rc;
    }
    return Calls::Atomic(ep, {K::kWrite,
                              "fi_atomicmsg",
                              {msg->msg_iov, msg->desc, msg->iov_count},
                              {},
                              {},
                              msg->addr,
                              msg->rma_iov,
                              msg->rma_iov_count,
                              EnumValue(msg->datatype),
                              EnumValue(msg->op),
                              msg->data,
                              msg->context,
                              flags,
                              true});
  }
  static ssize_t Inject(fid_ep* ep, const void* buf, size_t count,
                        fi_addr_t dest, uint64_t addr, uint64_t key,
                        fi_datatype datatype, fi_op op) {
    if (auto rc =
            Diverted<Calls>(ep, dest, &fid_ep::atomic, &fi_ops_atomic::inject,
                            buf, count, dest, addr, key, datatype, op)) {
      return *rc;
    }
    fi_ioc operand = {const_cast<void*>(buf), count};
    fi_rma_ioc rma = {addr, count, key};
    return Calls::Atomic(ep, {K::kWrite,
                              "fi_inject_atomic",
                              {&operand, nullptr, 1},
                              {},
                              {},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              nullptr,
                              FI_INJECT,
                              false,
                              true});
  }

  // --- fi_fetch_atomic ---
  static ssize_t Fetch(fid_ep* ep, const void* buf, size_t count, void* desc,
                       void* result, void* result_desc, fi_addr_t dest,
                       uint64_t addr, uint64_t key, fi_datatype datatype,
                       fi_op op, void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::atomic,
                                  &fi_ops_atomic::readwrite, buf, count, desc,
                                  result, result_desc, dest, addr, key,
                                  datatype, op, context)) {
      return *rc;
    }
    fi_ioc operand = {const_cast<void*>(buf), count};
    fi_ioc result_ioc = {result, count};
    fi_rma_ioc rma = {addr, count, key};
    return Calls::Atomic(ep, {K::kFetch,
                              "fi_fetch_atomic",
                              {&operand, &desc, 1},
                              {},
                              {&result_ioc, &result_desc, 1},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Fetchv(fid_ep* ep, const fi_ioc* iov, void** desc,
                        size_t count, fi_ioc* resultv, void** result_desc,
                        size_t result_count, fi_addr_t dest, uint64_t addr,
                        uint64_t key, fi_datatype datatype, fi_op op,
                        void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::atomic,
                                  &fi_ops_atomic::readwritev, iov, desc, count,
                                  resultv, result_desc, result_count, dest,
                                  addr, key, datatype, op, context)) {
      return *rc;
    }
    fi_rma_ioc rma = {addr, Elements(resultv, result_count), key};
    return Calls::Atomic(ep, {K::kFetch,
                              "fi_fetch_atomicv",
                              {iov, desc, count},
                              {},
                              {resultv, result_desc, result_count},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Fetchmsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv,
                          void** result_desc, size_t result_count,
                          uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::atomic,
                                  &fi_ops_atomic::readwritemsg, msg, resultv,
                                  result_desc, result_count, flags)) {
      return *rc;
    }
    if (ssize_t rc = CheckRemoteMsg<Calls>(ep, msg, "fi_fetch_atomicmsg");
        rc != 0) {
      return rc;
    }
    return Calls::Atomic(ep, {K::kFetch,
                              "fi_fetch_atomicmsg",
                              {msg->msg_iov, msg->desc, msg->iov_count},
                              {},
                              {resultv, result_desc, result_count},
                              msg->addr,
                              msg->rma_iov,
                              msg->rma_iov_count,
                              EnumValue(msg->datatype),
                              EnumValue(msg->op),
                              msg->data,
                              msg->context,
                              flags,
                              true});
  }

  // --- fi_compare_atomic ---
  static ssize_t Compare(fid_ep* ep, const void* buf, size_t count, void* desc,
                         const void* compare, void* compare_desc, void* result,
                         void* result_desc, fi_addr_t dest, uint64_t addr,
                         uint64_t key, fi_datatype datatype, fi_op op,
                         void* context) {
    if (auto rc = Diverted<Calls>(ep, dest, &fid_ep::atomic,
                                  &fi_ops_atomic::compwrite, buf, count, desc,
                                  compare, compare_desc, result, result_desc,
                                  dest, addr, key, datatype, op, context)) {
      return *rc;
    }
    fi_ioc operand = {const_cast<void*>(buf), count};
    fi_ioc compare_ioc = {const_cast<void*>(compare), count};
    fi_ioc result_ioc = {result, count};
    fi_rma_ioc rma = {addr, count, key};
    return Calls::Atomic(ep, {K::kCompare,
                              "fi_compare_atomic",
                              {&operand, &desc, 1},
                              {&compare_ioc, &compare_desc, 1},
                              {&result_ioc, &result_desc, 1},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Comparev(fid_ep* ep, const fi_ioc* iov, void** desc,
                          size_t count, const fi_ioc* comparev,
                          void** compare_desc, size_t compare_count,
                          fi_ioc* resultv, void** result_desc,
                          size_t result_count, fi_addr_t dest, uint64_t addr,
                          uint64_t key, fi_datatype datatype, fi_op op,
                          void* context) {
    if (auto rc = Diverted<Calls>(
            ep, dest, &fid_ep::atomic, &fi_ops_atomic::compwritev, iov, desc,
            count, comparev, compare_desc, compare_count, resultv, result_desc,
            result_count, dest, addr, key, datatype, op, context)) {
      return *rc;
    }
    fi_rma_ioc rma = {addr, Elements(iov, count), key};
    return Calls::Atomic(ep, {K::kCompare,
                              "fi_compare_atomicv",
                              {iov, desc, count},
                              {comparev, compare_desc, compare_count},
                              {resultv, result_desc, result_count},
                              dest,
                              &rma,
                              1,
                              datatype,
                              op,
                              0,
                              context,
                              Calls::TxFlags(ep)});
  }
  static ssize_t Comparemsg(fid_ep* ep, const fi_msg_atomic* msg,
                            const fi_ioc* comparev, void** compare_desc,
                            size_t compare_count, fi_ioc* resultv,
                            void** result_desc, size_t result_count,
                            uint64_t flags) {
    if (auto rc = Diverted<Calls>(ep, DestOf(msg), &fid_ep::atomic,
                                  &fi_ops_atomic::compwritemsg, msg, comparev,
                                  compare_desc, compare_count, resultv,
                                  result_desc, result_count, flags)) {
      return *rc;
    }
    if (ssize_t rc = CheckRemoteMsg<Calls>(ep, msg, "fi_compare_atomicmsg");
        rc != 0) {
      return rc;
    }
    return Calls::Atomic(ep, {K::kCompare,
                              "fi_compare_atomicmsg",
                              {msg->msg_iov, msg->desc, msg->iov_count},
                              {comparev, compare_desc, compare_count},
                              {resultv, result_desc, result_count},
                              msg->addr,
                              msg->rma_iov,
                              msg->rma_iov_count,
                              EnumValue(msg->datatype),
                              EnumValue(msg->op),
                              msg->data,
                              msg->context,
                              flags,
                              true});
  }

  // --- fi_atomicvalid & co. ---
  static int WriteValid(fid_ep* ep, fi_datatype datatype, fi_op op,
                        size_t* count) {
    return Calls::AtomicValid(ep, K::kWrite, datatype, op, count);
  }
  static int FetchValid(fid_ep* ep, fi_datatype datatype, fi_op op,
                        size_t* count) {
    return Calls::AtomicValid(ep, K::kFetch, datatype, op, count);
  }
  static int CompareValid(fid_ep* ep, fi_datatype datatype, fi_op op,
                          size_t* count) {
    return Calls::AtomicValid(ep, K::kCompare, datatype, op, count);
  }
};

}  // namespace data_path_internal

template <typename Calls>
constexpr fi_ops_atomic AtomicOps() {
  using E = data_path_internal::AtomicEntries<Calls>;
  return {
      .size = sizeof(fi_ops_atomic),
      .write = E::Write,
      .writev = E::Writev,
      .writemsg = E::Writemsg,
      .inject = E::Inject,
      .readwrite = E::Fetch,
      .readwritev = E::Fetchv,
      .readwritemsg = E::Fetchmsg,
      .compwrite = E::Compare,
      .compwritev = E::Comparev,
      .compwritemsg = E::Comparemsg,
      .writevalid = E::WriteValid,
      .readwritevalid = E::FetchValid,
      .compwritevalid = E::CompareValid,
  };
}

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_ATOMIC_PATH_OPS_H_

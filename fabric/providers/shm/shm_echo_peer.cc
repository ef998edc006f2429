// A process at the other end of shm_rdm_processes_test: opens an shm RDM
// endpoint, prints its address (a sockaddr_in, as hex) on one line, then
// sends back every message it receives to PARENT_HEX (the parent's
// address, as hex), until an empty message. Exits 0 after that, 1 on an
// error (printed to stderr). With --no-ptrace it first gives up
// CAP_SYS_PTRACE, so it cannot copy from a parent that is not dumpable;
// with --own-netns it first moves to a network namespace of its own; with
// --rma its first message to the parent says where the parent may read
// and write its 16 MiB buffer: the RMA address and key (two uint64_t).
//
// Usage: shm_echo_peer PARENT_HEX [--no-ptrace | --own-netns | --rma]
#include <linux/capability.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fabric/fixtures/loopback.h"

namespace {

int Fail(const char* what, int rc) {
  fprintf(stderr, "shm_echo_peer: %s: %s\n", what, fi_strerror(-rc));
  return 1;
}

// Drops CAP_SYS_PTRACE from every capability set of this process.
bool DropPtrace() {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  uint32_t bit = 1u << CAP_SYS_PTRACE;  // in the first word
  data[0].effective &= ~bit;
  data[0].permitted &= ~bit;
  data[0].inheritable &= ~bit;
  return syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  sockaddr_in parent = {};
  bool no_ptrace = argc == 3 && strcmp(argv[2], "--no-ptrace") == 0;
  bool own_netns = argc == 3 && strcmp(argv[2], "--own-netns") == 0;
  bool rma = argc == 3 && strcmp(argv[2], "--rma") == 0;
  if ((argc != 2 && !no_ptrace && !own_netns && !rma) ||
      !fabric::fixtures::FromHex(argv[1], &parent, sizeof(parent))) {
    fprintf(stderr,
            "usage: shm_echo_peer PARENT_HEX [--no-ptrace | --own-netns | "
            "--rma]\n");
    return 2;
  }
  if (no_ptrace && !DropPtrace()) return Fail("capset", -FI_EPERM);
  if (own_netns && unshare(CLONE_NEWNET) != 0) {
    return Fail("unshare", -FI_EPERM);
  }
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup("shm");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | (rma ? FI_RMA : 0);
  hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  fi_info* info = nullptr;
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &info);
  fi_freeinfo(hints);
  if (rc != 0) return Fail("fi_getinfo", rc);
  fabric::fixtures::Objects rdm;
  if ((rc = fabric::fixtures::OpenRdmEndpoint(info, FI_CQ_FORMAT_MSG, &rdm)) !=
      0) {
    return Fail("setup", rc);
  }
  fid_av* av = rdm.av;
  fid_cq* cq = rdm.cq;
  fid_ep* ep = rdm.ep;
  fi_addr_t to_parent;
  if (fi_av_insert(av, &parent, 1, &to_parent, 0, nullptr) != 1) {
    return Fail("fi_av_insert", -FI_EINVAL);
  }
  sockaddr_in own = {};
  size_t len = sizeof(own);
  if ((rc = fi_getname(&ep->fid, &own, &len)) != 0) return Fail("getname", rc);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&own);
  for (size_t i = 0; i < sizeof(own); ++i) printf("%02x", bytes[i]);
  printf("\n");
  fflush(stdout);

  std::vector<char> buffer(16 << 20);
  fid_mr* mr = nullptr;
  fi_context context;
  if (rma) {
    if ((rc = fi_mr_reg(rdm.domain, buffer.data(), buffer.size(),
                        FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                        nullptr)) != 0) {
      return Fail("fi_mr_reg", rc);
    }
    uint64_t where[2] = {(info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
                             ? reinterpret_cast<uint64_t>(buffer.data())
                             : 0,
                         fi_mr_key(mr)};
    rc = static_cast<int>(
        fi_send(ep, where, sizeof(where), nullptr, to_parent, &context));
    if (rc != 0) return Fail("fi_send", rc);
    if ((rc = fabric::fixtures::ReapCompletions(cq, 1)) != 0) {
      return Fail("send", rc);
    }
  }
  for (;;) {
    rc = static_cast<int>(fi_recv(ep, buffer.data(), buffer.size(), nullptr,
                                  FI_ADDR_UNSPEC, &context));
    if (rc != 0) return Fail("fi_recv", rc);
    fi_cq_msg_entry msg;
    ssize_t got;
    while ((got = fi_cq_read(cq, &msg, 1)) == -FI_EAGAIN) {
    }
    if (got != 1) return Fail("receive", static_cast<int>(got));
    if (msg.len == 0) break;
    rc = static_cast<int>(
        fi_send(ep, buffer.data(), msg.len, nullptr, to_parent, &context));
    if (rc != 0) return Fail("fi_send", rc);
    if ((rc = fabric::fixtures::ReapCompletions(cq, 1)) != 0) {
      return Fail("send", rc);
    }
  }
  if (mr != nullptr) fi_close(&mr->fid);
  fabric::fixtures::CloseObjects(&rdm);
  fi_freeinfo(info);
  return 0;
}

/* One message between two RDM endpoints of this process over tcp on the
 * loopback interface, with the libfabric C API: fi_getinfo, fabric,
 * domain, AV, CQs, endpoints, then fi_send and fi_recv. Prints what
 * arrived; exits 1 on any failure. */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                    \
  do {                                                                 \
    int rc_ = (int)(call);                                             \
    if (rc_ != 0) {                                                    \
      fprintf(stderr, "%s: %s (%d)\n", #call, fi_strerror(-rc_), rc_); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

/* Waits for one completion on `cq`. */
static int WaitOne(struct fid_cq* cq, struct fi_cq_msg_entry* entry) {
  for (;;) {
    ssize_t n = fi_cq_read(cq, entry, 1);
    if (n == 1) return 0;
    if (n != -FI_EAGAIN) return (int)n;
  }
}

int main(void) {
  struct fi_info* hints = fi_allocinfo();
  struct fi_info* info = NULL;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->domain_attr->name = strdup("lo");
  CHECK(fi_getinfo(FI_VERSION(1, 18), NULL, NULL, 0, hints, &info));
  printf("provider %s, domain %s\n", info->fabric_attr->prov_name,
         info->domain_attr->name);

  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  struct fid_cq* cq[2];
  struct fid_ep* ep[2];
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG};
  CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
  CHECK(fi_domain(fabric, info, &domain, NULL));
  CHECK(fi_av_open(domain, &av_attr, &av, NULL));
  for (int i = 0; i < 2; i++) {
    CHECK(fi_cq_open(domain, &cq_attr, &cq[i], NULL));
    CHECK(fi_endpoint(domain, info, &ep[i], NULL));
    CHECK(fi_ep_bind(ep[i], &av->fid, 0));
    CHECK(fi_ep_bind(ep[i], &cq[i]->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(ep[i]));
  }

  /* Endpoint 1's address, inserted into the AV: the destination. */
  char name[64];
  size_t name_len = sizeof(name);
  fi_addr_t peer;
  CHECK(fi_getname(&ep[1]->fid, name, &name_len));
  if (fi_av_insert(av, name, 1, &peer, 0, NULL) != 1) return 1;

  char in[32] = {0};
  const char out[] = "hello from a C program";
  struct fi_cq_msg_entry entry;
  CHECK(fi_recv(ep[1], in, sizeof(in), NULL, FI_ADDR_UNSPEC, NULL));
  CHECK(fi_send(ep[0], out, sizeof(out), NULL, peer, NULL));
  CHECK(WaitOne(cq[0], &entry));
  CHECK(WaitOne(cq[1], &entry));
  printf("received %zu bytes: %s\n", entry.len, in);
  int ok = entry.len == sizeof(out) && strcmp(in, out) == 0;

  for (int i = 0; i < 2; i++) {
    CHECK(fi_close(&ep[i]->fid));
    CHECK(fi_close(&cq[i]->fid));
  }
  CHECK(fi_close(&av->fid));
  CHECK(fi_close(&domain->fid));
  CHECK(fi_close(&fabric->fid));
  fi_freeinfo(info);
  fi_freeinfo(hints);
  return ok ? 0 : 1;
}

// File: apps/ib_rc_example/main.cc
//
// The "Infiniband RC Example" of the OFI application-flow slides: a
// connected endpoint (FI_EP_MSG) over RDMA CM, InfiniBand reliable
// connection (FI_PROTO_RDMA_CM_IB_RC), with messages and RMA.
//
//   server:  ib_rc_example [-p PORT]
//   client:  ib_rc_example [-p PORT] SERVER_ADDR
//
// With InfiniBand hardware it runs on verbs. Without it, fi_getinfo finds
// nothing for the protocol: the program says so in one line and exits 77
// (kNoProvider, the automake "skipped" code). --prov tcp --protocol any
// runs the identical flow over tcp.
//
// The flow, each step numbered as it prints:
//   Initialization     1 fi_getinfo with the slide's hints, 2 fi_fabric,
//                      3 fi_eq_open (connection events)
//   Server setup       4 fi_passive_ep + fi_pep_bind + fi_listen,
//                      5 FI_CONNREQ: the request's fi_info
//   Endpoint           6 fi_domain, fi_cq_open (send, receive), fi_endpoint
//                        + fi_ep_bind + fi_enable; 7 fi_mr_reg of the
//                        buffers, a receive posted
//   Connection         8 server: fi_accept, carrying the address and key of
//                        its RMA buffer; client: fi_connect;
//                      9 FI_CONNECTED on both sides
//   Data transfer     10 "ping" and "pong" (fi_send / fi_recv)
//                     11 client: fi_write into the server's buffer,
//                     12 client: fi_read back, compared, then "done";
//                        server: its buffer compared
//   Shutdown          13 client: fi_shutdown; server: FI_SHUTDOWN
//                     14 every object closed in reverse order of opening
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "apps/common/args.h"
#include "apps/common/check.h"
#include "apps/common/net.h"
#include "apps/common/wait.h"

namespace {

constexpr int kNoProvider = 77;
constexpr size_t kRmaSize = 4096;

// The server's RMA buffer, as fi_accept's connection data gives it to the
// client (both ends of one byte order).
struct RemoteBuffer {
  uint64_t addr;  // its virtual address (FI_MR_VIRT_ADDR) or offset 0
  uint64_t key;   // fi_mr_key
  uint64_t len;
};

// Everything the program sends, receives, writes and reads: one region,
// registered once (FI_MR_LOCAL: local buffers need a descriptor too).
struct Buffers {
  char rx[64];
  char tx[64];
  unsigned char rma[kRmaSize];    // server: the RMA target; client: source
  unsigned char check[kRmaSize];  // client: where fi_read puts it back
};

// The slide's "Example Application struct".
struct Example {
  const char* me;  // "server" or "client"
  fi_info* info = nullptr;       // fi_getinfo's answer
  fi_info* conn_info = nullptr;  // server: the FI_CONNREQ's
  fid_fabric* fabric = nullptr;
  fid_eq* eq = nullptr;
  fid_pep* pep = nullptr;  // server
  fid_domain* domain = nullptr;
  fid_cq* scq = nullptr;
  fid_cq* rcq = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  Buffers buf = {};
};

unsigned char Pattern(size_t i) { return static_cast<unsigned char>(i * 7 + 3); }

bool HoldsPattern(const unsigned char* data) {
  for (size_t i = 0; i < kRmaSize; ++i) {
    if (data[i] != Pattern(i)) return false;
  }
  return true;
}

void PostRecv(Example& ex) {
  FI_CHECK(fi_recv(ex.ep, ex.buf.rx, sizeof(ex.buf.rx), fi_mr_desc(ex.mr), 0,
                   nullptr));
}

void SendText(Example& ex, int step, const char* text) {
  strcpy(ex.buf.tx, text);
  FI_CHECK(fi_send(ex.ep, ex.buf.tx, strlen(text) + 1, fi_mr_desc(ex.mr), 0,
                   nullptr));
  apps::WaitCompletion(ex.scq, "fi_send");
  apps::Say("%s: %d. sent \"%s\"", ex.me, step, text);
}

void ReceiveText(Example& ex, int step, const char* expected) {
  fi_cq_msg_entry entry = apps::WaitCompletion(ex.rcq, "fi_recv");
  if (entry.len != strlen(expected) + 1 || strcmp(ex.buf.rx, expected) != 0) {
    apps::Fail("expected \"%s\", received %zu bytes", expected, entry.len);
  }
  apps::Say("%s: %d. received \"%s\"", ex.me, step, expected);
}

// 6 and 7: the domain, CQs and endpoint for `info` (the server's from the
// connection request, the client's from fi_getinfo), the buffers
// registered, and a receive posted before the peer can send.
void OpenEndpoint(Example& ex, fi_info* info) {
  FI_CHECK(fi_domain(ex.fabric, info, &ex.domain, nullptr));
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  FI_CHECK(fi_cq_open(ex.domain, &cq_attr, &ex.scq, nullptr));
  FI_CHECK(fi_cq_open(ex.domain, &cq_attr, &ex.rcq, nullptr));
  FI_CHECK(fi_endpoint(ex.domain, info, &ex.ep, nullptr));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.eq->fid, 0));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.scq->fid, FI_TRANSMIT));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.rcq->fid, FI_RECV));
  FI_CHECK(fi_enable(ex.ep));
  apps::Say("%s: 6. fi_domain, fi_cq_open (send, receive), fi_endpoint, "
            "fi_ep_bind (eq, cqs), fi_enable",
            ex.me);
  FI_CHECK(fi_mr_reg(ex.domain, &ex.buf, sizeof(ex.buf),
                     FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
                         FI_REMOTE_WRITE,
                     0, 0, 0, &ex.mr, nullptr));
  PostRecv(ex);
  apps::Say("%s: 7. fi_mr_reg (%zu bytes, key %llu), fi_recv posted", ex.me,
            sizeof(ex.buf), static_cast<unsigned long long>(fi_mr_key(ex.mr)));
}

void RunServer(Example& ex) {
  // 4. A passive endpoint listening at src_addr; connection requests come
  // to the EQ.
  FI_CHECK(fi_passive_ep(ex.fabric, ex.info, &ex.pep, nullptr));
  FI_CHECK(fi_pep_bind(ex.pep, &ex.eq->fid, 0));
  FI_CHECK(fi_listen(ex.pep));
  std::string name = apps::ToString(apps::GetName(&ex.pep->fid));
  apps::Say("server: 4. fi_passive_ep, fi_pep_bind, fi_listen");
  apps::Say("server: listening at %s", name.c_str());

  // 5. A client's request; its fi_info describes the endpoint to open.
  fi_eq_cm_entry request = apps::WaitEvent(ex.eq, FI_CONNREQ, "fi_listen");
  ex.conn_info = request.info;
  apps::Say("server: 5. FI_CONNREQ");

  // 6, 7. The endpoint for the request, the buffers.
  OpenEndpoint(ex, ex.conn_info);

  // 8. Accept, telling the client where the RMA buffer is.
  RemoteBuffer remote = {};
  bool virt_addr = ex.conn_info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
  remote.addr = virt_addr ? reinterpret_cast<uintptr_t>(ex.buf.rma)
                          : offsetof(Buffers, rma);
  remote.key = fi_mr_key(ex.mr);
  remote.len = kRmaSize;
  FI_CHECK(fi_accept(ex.ep, &remote, sizeof(remote)));
  apps::Say("server: 8. fi_accept (RMA buffer: %s 0x%llx, key %llu)",
            virt_addr ? "address" : "offset",
            static_cast<unsigned long long>(remote.addr),
            static_cast<unsigned long long>(remote.key));

  // 9. Connected.
  apps::WaitEvent(ex.eq, FI_CONNECTED, "fi_accept");
  apps::Say("server: 9. FI_CONNECTED");

  // 10. ping / pong.
  ReceiveText(ex, 10, "ping");
  PostRecv(ex);
  SendText(ex, 10, "pong");

  // 11, 12. The client writes and reads our buffer; we only make progress
  // (reading the CQ) until its "done", then look at what it wrote.
  ReceiveText(ex, 12, "done");
  if (!HoldsPattern(ex.buf.rma)) apps::Fail("RMA write: wrong contents");
  apps::Say("server: 12. RMA write verified (%zu bytes in our buffer)",
            kRmaSize);

  // 13. The client disconnects.
  apps::WaitEvent(ex.eq, FI_SHUTDOWN, "the client's fi_shutdown");
  apps::Say("server: 13. FI_SHUTDOWN: the client disconnected");
}

void RunClient(Example& ex) {
  // 4 ... 7. Domain, endpoint and buffers for fi_getinfo's answer.
  apps::Say("client: 4. (no passive endpoint: the client connects)");
  apps::Say("client: 5. (no connection request)");
  OpenEndpoint(ex, ex.info);

  // 8. Connect to dest_addr; 9. connected, with the server's buffer in the
  // connection data.
  FI_CHECK(fi_connect(ex.ep, ex.info->dest_addr, nullptr, 0));
  apps::Say("client: 8. fi_connect");
  std::string data;
  apps::WaitEvent(ex.eq, FI_CONNECTED, "fi_connect", &data);
  RemoteBuffer remote;
  if (data.size() != sizeof(remote)) {
    apps::Fail("FI_CONNECTED: %zu bytes of connection data, expected %zu",
               data.size(), sizeof(remote));
  }
  memcpy(&remote, data.data(), sizeof(remote));
  if (remote.len != kRmaSize) apps::Fail("the server's buffer: wrong size");
  apps::Say("client: 9. FI_CONNECTED (server's RMA buffer 0x%llx, key %llu)",
            static_cast<unsigned long long>(remote.addr),
            static_cast<unsigned long long>(remote.key));

  // 10. ping / pong.
  SendText(ex, 10, "ping");
  ReceiveText(ex, 10, "pong");

  // 11. RMA write: our pattern into the server's buffer.
  for (size_t i = 0; i < kRmaSize; ++i) ex.buf.rma[i] = Pattern(i);
  FI_CHECK(fi_write(ex.ep, ex.buf.rma, kRmaSize, fi_mr_desc(ex.mr), 0,
                    remote.addr, remote.key, nullptr));
  apps::WaitCompletion(ex.scq, "fi_write");
  apps::Say("client: 11. fi_write: %zu bytes into the server's buffer",
            kRmaSize);

  // 12. RMA read: the server's buffer back, compared with what we wrote.
  FI_CHECK(fi_read(ex.ep, ex.buf.check, kRmaSize, fi_mr_desc(ex.mr), 0,
                   remote.addr, remote.key, nullptr));
  apps::WaitCompletion(ex.scq, "fi_read");
  if (!HoldsPattern(ex.buf.check)) apps::Fail("RMA read: wrong contents");
  apps::Say("client: 12. fi_read: RMA read verified (%zu bytes)", kRmaSize);
  SendText(ex, 12, "done");

  // 13. Disconnect.
  FI_CHECK(fi_shutdown(ex.ep, 0));
  apps::Say("client: 13. fi_shutdown");
}

}  // namespace

int main(int argc, char** argv) {
  apps::SetProgramName(argv[0]);
  apps::Args args = apps::ParseArgs(
      argc, argv,
      {"the slide's InfiniBand RC example: FI_EP_MSG connection setup, "
       "send/recv, RMA write and read",
       7472,
       {"rdma_cm_ib_rc", "any"},
       "; any: whatever the provider speaks, e.g. --prov tcp",
       "exit status: 0 done, 1 a call failed, 2 bad arguments, 77 no "
       "InfiniBand RC provider (use --prov tcp --protocol any)\n"});
  Example ex;
  ex.me = args.role();

  // --- Initialization -----------------------------------------------------

  // 1. fi_getinfo with the slide's hints. src_addr: the server's address
  // and port (the client's interface, any port); the client also names
  // the server (dest_addr). The slide's FI_CANCEL is not a capability bit
  // in libfabric 1.x: fi_cancel is part of every endpoint. mr_mode: what
  // verbs asks of an application; providers that need less ignore it.
  sockaddr_in local =
      apps::ResolveIPv4(args.bind, args.is_server() ? args.port : 0);
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) apps::Fail("fi_allocinfo: out of memory");
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG | FI_RMA;
  hints->ep_attr->protocol = args.protocol == "any" ? FI_PROTO_UNSPEC
                                                    : FI_PROTO_RDMA_CM_IB_RC;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->src_addr = malloc(sizeof(local));  // fi_freeinfo frees it
  memcpy(hints->src_addr, &local, sizeof(local));
  hints->src_addrlen = sizeof(local);
  if (!args.is_server()) {
    sockaddr_in server = apps::ResolveIPv4(args.server, args.port);
    hints->dest_addr = malloc(sizeof(server));
    memcpy(hints->dest_addr, &server, sizeof(server));
    hints->dest_addrlen = sizeof(server);
  }
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  if (!args.prov.empty()) {
    hints->fabric_attr->prov_name = strdup(args.prov.c_str());
  }
  int rc = fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &ex.info);
  fi_freeinfo(hints);
  if (rc == -FI_ENODATA && args.protocol != "any") {
    fprintf(stderr,
            "%s: no InfiniBand RC provider here (fi_getinfo: %s); run with "
            "--prov tcp --protocol any for the same flow over TCP\n",
            apps::ProgramName(), fi_strerror(-rc));
    return kNoProvider;
  }
  apps::Check(rc, "fi_getinfo");
  apps::Say("%s: 1. fi_getinfo: provider %s, fabric %s, domain %s, "
            "protocol %s",
            ex.me, ex.info->fabric_attr->prov_name, ex.info->fabric_attr->name,
            ex.info->domain_attr->name,
            fi_tostr(&ex.info->ep_attr->protocol, FI_TYPE_PROTOCOL));

  // 2. The fabric; 3. its event queue, for connection events.
  FI_CHECK(fi_fabric(ex.info->fabric_attr, &ex.fabric, nullptr));
  apps::Say("%s: 2. fi_fabric", ex.me);
  fi_eq_attr eq_attr = {};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;  // fi_eq_sread blocks
  FI_CHECK(fi_eq_open(ex.fabric, &eq_attr, &ex.eq, nullptr));
  apps::Say("%s: 3. fi_eq_open", ex.me);

  // --- Connection setup and data transfer ---------------------------------
  if (args.is_server()) {
    RunServer(ex);
  } else {
    RunClient(ex);
  }

  // --- 14. Close in reverse order of opening ------------------------------
  FI_CHECK(fi_close(&ex.mr->fid));
  FI_CHECK(fi_close(&ex.ep->fid));
  FI_CHECK(fi_close(&ex.rcq->fid));
  FI_CHECK(fi_close(&ex.scq->fid));
  FI_CHECK(fi_close(&ex.domain->fid));
  if (ex.pep != nullptr) FI_CHECK(fi_close(&ex.pep->fid));
  FI_CHECK(fi_close(&ex.eq->fid));
  FI_CHECK(fi_close(&ex.fabric->fid));
  fi_freeinfo(ex.conn_info);
  fi_freeinfo(ex.info);
  apps::Say("%s: 14. closed mr, endpoint, cqs, domain, %seq, fabric; done",
            ex.me, ex.pep != nullptr ? "passive endpoint, " : "");
  return 0;
}

// File: apps/rds_example/main.cc
//
// The "RDS Example" of the OFI application-flow slides: reliable datagrams
// (FI_EP_RDM) with FI_SOURCE, so a receiver learns who sent each message.
// Linux RDS sockets are not available here, so it runs on this library's
// RDM providers (--prov tcp).
//
//   server:  rds_example [-p PORT]
//   client:  rds_example [-p PORT] SERVER_ADDR
//
// The flow, each step numbered as it prints:
//   Initialization   1 fi_getinfo with the slide's hints, 2 fi_fabric,
//                    3 fi_domain, 4 fi_av_open, 5 fi_cq_open (send, recv),
//                    6 fi_endpoint + fi_ep_bind + fi_enable, 7 fi_getname
//   Addressing       8 client: fi_av_insert of the server's sockaddr_in;
//                      server: inserts nothing (it knows no client yet)
//   Data transfer    9 client -> server "hello" carrying the client's own
//                      address; the server's fi_cq_readfrom reports
//                      FI_ADDR_NOTAVAIL (not in its AV), so it inserts it
//                   10 server -> client "welcome"
//                   11 client -> server "ping": now fi_cq_readfrom reports
//                      the client's fi_addr_t (FI_SOURCE)
//                   12 server: a receive posted for nothing, fi_cancel, and
//                      its FI_ECANCELED error completion
//   Shutdown        13 "bye" each way, then every object closed in reverse
//                      order of opening
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include "apps/common/args.h"
#include "apps/common/check.h"
#include "apps/common/net.h"
#include "apps/common/wait.h"

namespace {

// Message 9: a greeting and the address to answer (the client's own
// fi_getname), since the server's AV does not hold the client yet.
struct Hello {
  char text[16];
  sockaddr_in reply_to;
};

// The slide's "Example Application struct", for an RDM endpoint.
struct Example {
  const char* me;  // "server" or "client"
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* scq = nullptr;  // send completions
  fid_cq* rcq = nullptr;  // receive completions
  fid_ep* ep = nullptr;
  char rx[64];  // receive buffer
};

void PostRecv(Example& ex, void* context) {
  FI_CHECK(fi_recv(ex.ep, ex.rx, sizeof(ex.rx), nullptr, FI_ADDR_UNSPEC,
                   context));
}

// fi_send and its completion. -FI_EAGAIN (no room yet) is retried after
// reading the CQ, which lets the provider progress.
void Send(Example& ex, const void* data, size_t len, fi_addr_t dest) {
  ssize_t rc;
  while ((rc = fi_send(ex.ep, data, len, nullptr, dest, nullptr)) ==
         -FI_EAGAIN) {
    fi_cq_read(ex.scq, nullptr, 0);
  }
  apps::Check(rc, "fi_send");
  apps::WaitCompletion(ex.scq, "fi_send");
}

// The next message, which must read `expected`; its sender (FI_SOURCE).
fi_addr_t Receive(Example& ex, const char* expected) {
  fi_addr_t source = FI_ADDR_NOTAVAIL;
  fi_cq_msg_entry entry = apps::WaitCompletion(ex.rcq, "fi_recv", &source);
  if (!(entry.flags & FI_RECV) || entry.len < strlen(expected) + 1 ||
      strcmp(ex.rx, expected) != 0) {
    apps::Fail("expected \"%s\", received %zu bytes", expected, entry.len);
  }
  return source;
}

std::string AddrText(fi_addr_t addr) {
  return addr == FI_ADDR_NOTAVAIL ? "FI_ADDR_NOTAVAIL"
                                  : "fi_addr " + std::to_string(addr);
}

// FI_SOURCE: the message `text` must come from `expected`.
void ExpectSource(fi_addr_t source, fi_addr_t expected, const char* text) {
  if (source != expected) {
    apps::Fail("FI_SOURCE: \"%s\" came from %s, expected %s", text,
               AddrText(source).c_str(), AddrText(expected).c_str());
  }
}

// fi_av_insert of one peer address; its fi_addr_t.
fi_addr_t Insert(Example& ex, const sockaddr_in& address) {
  fi_addr_t peer = FI_ADDR_NOTAVAIL;
  if (FI_CHECK(fi_av_insert(ex.av, &address, 1, &peer, 0, nullptr)) != 1) {
    apps::Fail("fi_av_insert: %s was not inserted",
               apps::ToString(address).c_str());
  }
  return peer;
}

}  // namespace

int main(int argc, char** argv) {
  apps::SetProgramName(argv[0]);
  apps::Args args = apps::ParseArgs(
      argc, argv,
      {"the slide's RDS example: FI_EP_RDM messages, FI_SOURCE, fi_cancel",
       7471,
       {},
       "",
       "exit status: 0 done, 1 a call failed, 2 bad arguments\n"});
  Example ex;
  ex.me = args.role();
  const char* me = ex.me;

  // --- Initialization -----------------------------------------------------

  // 1. fi_getinfo with the slide's hints. src_addr is the local interface:
  // the server's at its known port, the client's at any port (0). The
  // slide's FI_CANCEL is not a capability bit in libfabric 1.x: fi_cancel
  // is part of every endpoint.
  sockaddr_in local =
      apps::ResolveIPv4(args.bind, args.is_server() ? args.port : 0);
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) apps::Fail("fi_allocinfo: out of memory");
  hints->ep_attr->type = FI_EP_RDM;  // reliable datagrams
  hints->ep_attr->protocol = FI_PROTO_UNSPEC;
  hints->caps = FI_MSG | FI_SOURCE | FI_SEND | FI_RECV;
  hints->addr_format = FI_SOCKADDR_IN;
  hints->src_addr = malloc(sizeof(local));  // fi_freeinfo frees it
  memcpy(hints->src_addr, &local, sizeof(local));
  hints->src_addrlen = sizeof(local);
  if (!args.prov.empty()) hints->fabric_attr->prov_name = strdup(args.prov.c_str());
  FI_CHECK(fi_getinfo(FI_VERSION(1, 18), nullptr, nullptr, 0, hints, &ex.info));
  fi_freeinfo(hints);
  apps::Say("%s: 1. fi_getinfo: provider %s, fabric %s, domain %s", me,
            ex.info->fabric_attr->prov_name, ex.info->fabric_attr->name,
            ex.info->domain_attr->name);

  // 2. The fabric, 3. its domain.
  FI_CHECK(fi_fabric(ex.info->fabric_attr, &ex.fabric, nullptr));
  apps::Say("%s: 2. fi_fabric", me);
  FI_CHECK(fi_domain(ex.fabric, ex.info, &ex.domain, nullptr));
  apps::Say("%s: 3. fi_domain", me);

  // 4. The address vector: peers' addresses in, fi_addr_t handles out.
  fi_av_attr av_attr = {};
  av_attr.type = ex.info->domain_attr->av_type;
  FI_CHECK(fi_av_open(ex.domain, &av_attr, &ex.av, nullptr));
  apps::Say("%s: 4. fi_av_open", me);

  // 5. Completion queues for sends and receives.
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  FI_CHECK(fi_cq_open(ex.domain, &cq_attr, &ex.scq, nullptr));
  FI_CHECK(fi_cq_open(ex.domain, &cq_attr, &ex.rcq, nullptr));
  apps::Say("%s: 5. fi_cq_open (send, receive)", me);

  // 6. The endpoint, bound to the AV and the CQs, then enabled.
  FI_CHECK(fi_endpoint(ex.domain, ex.info, &ex.ep, nullptr));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.av->fid, 0));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.scq->fid, FI_TRANSMIT));
  FI_CHECK(fi_ep_bind(ex.ep, &ex.rcq->fid, FI_RECV));
  FI_CHECK(fi_enable(ex.ep));
  apps::Say("%s: 6. fi_endpoint, fi_ep_bind (av, cqs), fi_enable", me);

  // 7. Our own address.
  sockaddr_in name = apps::GetName(&ex.ep->fid);
  apps::Say("%s: 7. fi_getname: %s", me, apps::ToString(name).c_str());
  if (args.is_server()) {
    apps::Say("server: listening at %s", apps::ToString(name).c_str());
  }

  if (args.is_server()) {
    // --- Server: addressing and data transfer -----------------------------

    // 8. Nothing to insert: the server learns its client from message 9.
    apps::Say("server: 8. AV empty: waiting for a client");

    // 9. The hello. Its source is not in our AV (FI_ADDR_NOTAVAIL), so the
    // message itself says where to answer; insert that address.
    Hello hello_ctx;  // any unique pointer serves as the context
    PostRecv(ex, &hello_ctx);
    fi_addr_t source = FI_ADDR_NOTAVAIL;
    fi_cq_msg_entry entry = apps::WaitCompletion(ex.rcq, "fi_recv", &source);
    Hello hello;
    if (entry.len != sizeof(hello)) {
      apps::Fail("message 9: %zu bytes, expected a hello", entry.len);
    }
    memcpy(&hello, ex.rx, sizeof(hello));
    hello.text[sizeof(hello.text) - 1] = '\0';
    apps::Say("server: 9. received \"%s\" from %s; it says reply to %s",
              hello.text, AddrText(source).c_str(),
              apps::ToString(hello.reply_to).c_str());
    fi_addr_t client = Insert(ex, hello.reply_to);
    apps::Say("server: 9. fi_av_insert: the client is fi_addr %llu",
              static_cast<unsigned long long>(client));

    // 10. Answer; 11. the ping now comes from a known fi_addr_t.
    PostRecv(ex, nullptr);
    const char welcome[] = "welcome";
    Send(ex, welcome, sizeof(welcome), client);
    apps::Say("server: 10. sent \"welcome\" to fi_addr %llu",
              static_cast<unsigned long long>(client));
    source = Receive(ex, "ping");
    ExpectSource(source, client, "ping");
    apps::Say("server: 11. FI_SOURCE: \"ping\" from fi_addr %llu = %s, the "
              "client",
              static_cast<unsigned long long>(source),
              apps::ToString(hello.reply_to).c_str());

    // 12. An outstanding receive, cancelled: it completes with an
    // FI_ECANCELED error entry carrying its context.
    int cancel_ctx;
    PostRecv(ex, &cancel_ctx);
    FI_CHECK(fi_cancel(&ex.ep->fid, &cancel_ctx));
    fi_cq_err_entry error = apps::WaitError(ex.rcq, "fi_cancel");
    if (error.err != FI_ECANCELED || error.op_context != &cancel_ctx) {
      apps::Fail("fi_cancel: expected FI_ECANCELED, got %s",
                 fi_strerror(error.err));
    }
    apps::Say("server: 12. cancelled: FI_ECANCELED (fi_cancel of the "
              "outstanding receive)");

    // 13. Orderly shutdown: "bye" each way.
    PostRecv(ex, nullptr);
    const char bye[] = "bye";
    Send(ex, bye, sizeof(bye), client);
    ExpectSource(Receive(ex, "bye"), client, "bye");
    apps::Say("server: 13. \"bye\" sent and received");
  } else {
    // --- Client: addressing and data transfer -----------------------------

    // 8. The server's address into our AV.
    sockaddr_in server_name = apps::ResolveIPv4(args.server, args.port);
    fi_addr_t server = Insert(ex, server_name);
    apps::Say("client: 8. fi_av_insert: server %s is fi_addr %llu",
              apps::ToString(server_name).c_str(),
              static_cast<unsigned long long>(server));

    // 9. Hello, with our own address to answer.
    PostRecv(ex, nullptr);
    Hello hello = {};
    strcpy(hello.text, "hello");
    hello.reply_to = name;
    Send(ex, &hello, sizeof(hello), server);
    apps::Say("client: 9. sent \"hello\" (reply to %s)",
              apps::ToString(name).c_str());

    // 10. The welcome, from the server's fi_addr_t (FI_SOURCE).
    fi_addr_t source = Receive(ex, "welcome");
    ExpectSource(source, server, "welcome");
    apps::Say("client: 10. FI_SOURCE: \"welcome\" from fi_addr %llu, the "
              "server",
              static_cast<unsigned long long>(source));

    // 11. Ping; 13. the server's bye, answered.
    PostRecv(ex, nullptr);
    const char ping[] = "ping";
    Send(ex, ping, sizeof(ping), server);
    apps::Say("client: 11. sent \"ping\"");
    ExpectSource(Receive(ex, "bye"), server, "bye");
    const char bye[] = "bye";
    Send(ex, bye, sizeof(bye), server);
    apps::Say("client: 13. \"bye\" received and sent");
  }

  // --- Shutdown: close in reverse order of opening ------------------------
  FI_CHECK(fi_close(&ex.ep->fid));
  FI_CHECK(fi_close(&ex.rcq->fid));
  FI_CHECK(fi_close(&ex.scq->fid));
  FI_CHECK(fi_close(&ex.av->fid));
  FI_CHECK(fi_close(&ex.domain->fid));
  FI_CHECK(fi_close(&ex.fabric->fid));
  fi_freeinfo(ex.info);
  apps::Say("%s: 14. closed endpoint, cqs, av, domain, fabric; done", me);
  return 0;
}

#include "apps/pingpong/fabric_setup.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "apps/pingpong/test_sizes.h"
#include "apps/pingpong/transfer.h"

namespace pingpong {
namespace {

// A peer that never connects fails the run after this long, or after
// --receive-timeout when that is longer (a client under valgrind in the
// emulated guest, bench:verbs_instructions, takes tens of seconds).
constexpr int kConnectTimeoutMs = 10000;
constexpr size_t kMinBuffer = 64;         // fi_pingpong's control size
constexpr uint64_t kMrKey = 0xC0DE;

// The hints: what pingpong needs from a provider.
fi_info* MakeHints(const Options& options) {
  fi_info* hints = fi_allocinfo();
  if (!hints) return nullptr;
  hints->ep_attr->type = options.ep_type;
  hints->caps = options.tagged ? FI_TAGGED : FI_MSG;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;  // we pass fi_context2 contexts
  // We register our buffers if asked and use only their local descriptors,
  // so every basic mode suits us (what verbs asks, as fi_pingpong says).
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  if (options.ipv6) hints->addr_format = FI_SOCKADDR_IN6;
  if (!options.provider.empty()) {
    hints->fabric_attr->prov_name = strdup(options.provider.c_str());
  }
  if (!options.domain.empty()) {
    hints->domain_attr->name = strdup(options.domain.c_str());
  }
  // DGRAM: ask for datagrams as large as the one size we will send.
  if (options.ep_type == FI_EP_DGRAM && options.sizes == SizeChoice::kOne) {
    hints->ep_attr->max_msg_size = static_cast<size_t>(options.transfer_size);
  }
  return hints;
}

// fi_getinfo for the hints; the client also names the server's address.
int GetInfo(const Options& options, const EndpointName* server,
            fi_info** info) {
  fi_info* hints = MakeHints(options);
  if (!hints) return Report("fi_allocinfo", -FI_ENOMEM);
  if (server) {
    hints->addr_format = server->addr_format;
    hints->dest_addrlen = server->bytes.size();
    hints->dest_addr = std::malloc(server->bytes.size());
    std::memcpy(hints->dest_addr, server->bytes.data(), server->bytes.size());
  }
  int ret = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, info);
  fi_freeinfo(hints);
  return ret ? Report("fi_getinfo", ret) : 0;
}

int GetName(fid_t fid, uint32_t addr_format, EndpointName& name) {
  name.addr_format = addr_format;
  name.bytes.resize(256);
  size_t length = name.bytes.size();
  int ret = fi_getname(fid, name.bytes.data(), &length);
  if (ret) return Report("fi_getname", ret);
  name.bytes.resize(length);
  return 0;
}

// Waits for one connection event and checks that it is `expected`.
int WaitForEvent(const Options& options, fid_eq* eq, uint32_t expected,
                 fi_eq_cm_entry& entry) {
  uint32_t event = 0;
  const int timeout_ms =
      std::max(kConnectTimeoutMs, options.receive_timeout_s * 1000);
  ssize_t ret =
      fi_eq_sread(eq, &event, &entry, sizeof(entry), timeout_ms, 0);
  if (ret == -FI_EAVAIL) {
    fi_eq_err_entry error = {};
    fi_eq_readerr(eq, &error, 0);
    std::fprintf(stderr, "fi_eq_sread: %s\n", fi_strerror(error.err));
    return -error.err;
  }
  if (ret != sizeof(entry)) return Report("fi_eq_sread", static_cast<int>(ret));
  if (event != expected) {
    std::fprintf(stderr, "Unexpected CM event %u (wanted %u)\n", event,
                 expected);
    return -FI_EOTHER;
  }
  return 0;
}

// The buffers, registered when the provider asks for FI_MR_LOCAL.
int AllocateBuffers(const Options& options, FabricObjects& objects) {
  size_t limit = options.sizes == SizeChoice::kOne
                     ? static_cast<size_t>(options.transfer_size)
                     : kMaxTransferSize;
  objects.max_transfer = std::min(limit, objects.info->ep_attr->max_msg_size);
  size_t half = std::max(objects.max_transfer, kMinBuffer);
  objects.buffer.assign(2 * half, 0);
  objects.rx_buf = objects.buffer.data();
  objects.tx_buf = objects.buffer.data() + half;
  if (!(objects.info->domain_attr->mr_mode & FI_MR_LOCAL)) return 0;
  int ret = fi_mr_reg(objects.domain, objects.buffer.data(),
                      objects.buffer.size(), FI_SEND | FI_RECV, 0, kMrKey, 0,
                      &objects.mr, nullptr);
  if (ret) return Report("fi_mr_reg", ret);
  objects.desc = fi_mr_desc(objects.mr);
  return 0;
}

// The objects every endpoint type needs once the domain is open: buffers,
// completion queues, an address vector (RDM, DGRAM) and the endpoint, bound
// and enabled, with a receive posted.
int OpenEndpoint(const Options& options, FabricObjects& objects) {
  int ret = AllocateBuffers(options, objects);
  if (ret) return ret;

  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_NONE;  // we poll: lowest latency
  cq_attr.size = objects.info->tx_attr->size;
  ret = fi_cq_open(objects.domain, &cq_attr, &objects.tx_cq, nullptr);
  if (ret) return Report("fi_cq_open", ret);
  cq_attr.size = objects.info->rx_attr->size;
  ret = fi_cq_open(objects.domain, &cq_attr, &objects.rx_cq, nullptr);
  if (ret) return Report("fi_cq_open", ret);

  if (objects.info->ep_attr->type != FI_EP_MSG) {
    fi_av_attr av_attr = {};
    av_attr.type = objects.info->domain_attr->av_type;
    ret = fi_av_open(objects.domain, &av_attr, &objects.av, nullptr);
    if (ret) return Report("fi_av_open", ret);
  }

  ret = fi_endpoint(objects.domain, objects.info, &objects.ep, nullptr);
  if (ret) return Report("fi_endpoint", ret);
  if (objects.eq) {
    ret = fi_ep_bind(objects.ep, &objects.eq->fid, 0);
    if (ret) return Report("fi_ep_bind(eq)", ret);
  }
  if (objects.av) {
    ret = fi_ep_bind(objects.ep, &objects.av->fid, 0);
    if (ret) return Report("fi_ep_bind(av)", ret);
  }
  ret = fi_ep_bind(objects.ep, &objects.tx_cq->fid, FI_TRANSMIT);
  if (ret) return Report("fi_ep_bind(tx cq)", ret);
  ret = fi_ep_bind(objects.ep, &objects.rx_cq->fid, FI_RECV);
  if (ret) return Report("fi_ep_bind(rx cq)", ret);
  ret = fi_enable(objects.ep);
  if (ret) return Report("fi_enable", ret);
  // Posted before the peer can send: a message never finds no receive.
  return PostReceive(objects, options.tagged);
}

int InsertPeer(FabricObjects& objects, const EndpointName& peer) {
  int ret = fi_av_insert(objects.av, peer.bytes.data(), 1, &objects.peer, 0,
                         nullptr);
  if (ret != 1) return Report("fi_av_insert", ret < 0 ? ret : -FI_EOTHER);
  return 0;
}

// -v: both ends' addresses, e.g. to see which hosts the traffic runs between
// (mpirun_two_hosts_test checks them).
void PrintNames(fid_av* av, const EndpointName& own, const EndpointName& peer) {
  char own_text[128] = "?";  // kept if straddr fails
  char peer_text[128] = "?";
  size_t own_length = sizeof(own_text);
  size_t peer_length = sizeof(peer_text);
  fi_av_straddr(av, own.bytes.data(), own_text, &own_length);
  fi_av_straddr(av, peer.bytes.data(), peer_text, &peer_length);
  std::fprintf(stderr, "endpoint %s, peer %s\n", own_text, peer_text);
}

int OpenFabricAndDomain(FabricObjects& objects, bool with_eq) {
  int ret = fi_fabric(objects.info->fabric_attr, &objects.fabric, nullptr);
  if (ret) return Report("fi_fabric", ret);
  if (with_eq) {
    fi_eq_attr eq_attr = {};
    eq_attr.wait_obj = FI_WAIT_UNSPEC;  // fi_eq_sread blocks
    ret = fi_eq_open(objects.fabric, &eq_attr, &objects.eq, nullptr);
    if (ret) return Report("fi_eq_open", ret);
  }
  ret = fi_domain(objects.fabric, objects.info, &objects.domain, nullptr);
  return ret ? Report("fi_domain", ret) : 0;
}

// RDM and DGRAM: no connection. The server opens its endpoint and sends its
// name first; the client, knowing it, opens one and answers with its own.
int SetUpConnectionless(const Options& options, bool is_client,
                        OutOfBand& channel, FabricObjects& objects) {
  EndpointName server_name;
  if (is_client) {
    int ret = RecvName(channel, server_name);
    if (ret) return ret;
  }
  int ret = GetInfo(options, is_client ? &server_name : nullptr,
                    &objects.info);
  if (!ret) ret = OpenFabricAndDomain(objects, /*with_eq=*/false);
  if (!ret) ret = OpenEndpoint(options, objects);
  EndpointName own_name;
  if (!ret) ret = GetName(&objects.ep->fid, objects.info->addr_format, own_name);
  if (!ret) ret = SendName(channel, own_name);
  if (ret) return ret;
  EndpointName client_name;
  if (!is_client) ret = RecvName(channel, client_name);
  const EndpointName& peer_name = is_client ? server_name : client_name;
  if (!ret) ret = InsertPeer(objects, peer_name);
  if (!ret && options.verbose) PrintNames(objects.av, own_name, peer_name);
  return ret;
}

// MSG server: listen on a passive endpoint, send its name, accept the
// client's connection request with a new endpoint.
int SetUpMsgServer(const Options& options, OutOfBand& channel,
                   FabricObjects& objects) {
  int ret = GetInfo(options, nullptr, &objects.listen_info);
  if (ret) return ret;
  ret = fi_fabric(objects.listen_info->fabric_attr, &objects.fabric, nullptr);
  if (ret) return Report("fi_fabric", ret);
  fi_eq_attr eq_attr = {};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  ret = fi_eq_open(objects.fabric, &eq_attr, &objects.eq, nullptr);
  if (ret) return Report("fi_eq_open", ret);
  ret = fi_passive_ep(objects.fabric, objects.listen_info, &objects.pep,
                      nullptr);
  if (ret) return Report("fi_passive_ep", ret);
  ret = fi_pep_bind(objects.pep, &objects.eq->fid, 0);
  if (ret) return Report("fi_pep_bind", ret);
  ret = fi_listen(objects.pep);
  if (ret) return Report("fi_listen", ret);

  EndpointName listen_name;
  ret = GetName(&objects.pep->fid, objects.listen_info->addr_format,
                listen_name);
  if (!ret) ret = SendName(channel, listen_name);
  if (ret) return ret;

  fi_eq_cm_entry entry = {};
  ret = WaitForEvent(options, objects.eq, FI_CONNREQ, entry);
  if (ret) return ret;
  objects.info = entry.info;  // the request's attributes; we free it
  ret = fi_domain(objects.fabric, objects.info, &objects.domain, nullptr);
  if (ret) {
    fi_reject(objects.pep, objects.info->handle, nullptr, 0);
    return Report("fi_domain", ret);
  }
  ret = OpenEndpoint(options, objects);
  if (ret) {
    fi_reject(objects.pep, objects.info->handle, nullptr, 0);
    return ret;
  }
  ret = fi_accept(objects.ep, nullptr, 0);
  if (ret) return Report("fi_accept", ret);
  return WaitForEvent(options, objects.eq, FI_CONNECTED, entry);
}

// MSG client: connect an endpoint to the server's passive endpoint.
int SetUpMsgClient(const Options& options, OutOfBand& channel,
                   FabricObjects& objects) {
  EndpointName server_name;
  int ret = RecvName(channel, server_name);
  if (!ret) ret = GetInfo(options, &server_name, &objects.info);
  if (!ret) ret = OpenFabricAndDomain(objects, /*with_eq=*/true);
  if (!ret) ret = OpenEndpoint(options, objects);
  if (ret) return ret;
  ret = fi_connect(objects.ep, server_name.bytes.data(), nullptr, 0);
  if (ret) return Report("fi_connect", ret);
  fi_eq_cm_entry entry = {};
  return WaitForEvent(options, objects.eq, FI_CONNECTED, entry);
}

// fi_close on one object, reporting a failure; keeps the first error.
template <typename Fid>
void CloseOne(Fid*& object, const char* what, int& first_error) {
  if (!object) return;
  int ret = fi_close(&object->fid);
  if (ret) {
    std::fprintf(stderr, "fi_close(%s): %s\n", what, fi_strerror(-ret));
    if (!first_error) first_error = ret;
  }
  object = nullptr;
}

}  // namespace

int Report(const char* call, int ret) {
  std::fprintf(stderr, "%s(): ret=%d (%s)\n", call, ret, fi_strerror(-ret));
  return ret;
}

int SetUpFabric(const Options& options, bool is_client, OutOfBand& channel,
                FabricObjects& objects) {
  if (options.ep_type != FI_EP_MSG) {
    return SetUpConnectionless(options, is_client, channel, objects);
  }
  return is_client ? SetUpMsgClient(options, channel, objects)
                   : SetUpMsgServer(options, channel, objects);
}

int FabricObjects::Close() {
  int first_error = 0;
  CloseOne(mr, "mr", first_error);
  CloseOne(ep, "ep", first_error);
  CloseOne(pep, "pep", first_error);
  CloseOne(rx_cq, "rx cq", first_error);
  CloseOne(tx_cq, "tx cq", first_error);
  CloseOne(av, "av", first_error);
  CloseOne(eq, "eq", first_error);
  CloseOne(domain, "domain", first_error);
  CloseOne(fabric, "fabric", first_error);
  fi_freeinfo(info);
  info = nullptr;
  fi_freeinfo(listen_info);
  listen_info = nullptr;
  return first_error;
}

}  // namespace pingpong

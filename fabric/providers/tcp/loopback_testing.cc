#include "fabric/providers/tcp/loopback_testing.h"

#include <rdma/fi_endpoint.h>
#include <stdlib.h>
#include <string.h>

namespace fabric {
namespace tcp {

int OpenLoopbackDomain(fi_ep_type type, uint64_t caps,
                       const std::function<void(fi_info*)>& adjust,
                       LoopbackDomain* out) {
  return OpenLoopbackDomainAt("127.0.0.1", type, caps, adjust, out);
}

int OpenLoopbackDomainAt(const char* node, fi_ep_type type, uint64_t caps,
                         const std::function<void(fi_info*)>& adjust,
                         LoopbackDomain* out) {
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) return -FI_ENOMEM;
  hints->fabric_attr->prov_name = strdup("tcp");
  hints->ep_attr->type = type;
  hints->caps = caps;
  hints->addr_format = FI_SOCKADDR_IN;
  if (adjust) adjust(hints);
  int rc =
      fi_getinfo(FI_VERSION(1, 18), node, "0", FI_SOURCE, hints, &out->info);
  fi_freeinfo(hints);
  if (rc == 0) rc = fi_fabric(out->info->fabric_attr, &out->fabric, nullptr);
  if (rc == 0) rc = fi_domain(out->fabric, out->info, &out->domain, nullptr);
  return rc;
}

void UseShm(fi_info* hints, fi_progress progress) {
  free(hints->fabric_attr->prov_name);
  hints->fabric_attr->prov_name = strdup("shm");
  hints->domain_attr->data_progress = progress;
}

int OpenBoundEndpoint(fid_domain* domain, fi_info* info, fid_av* av,
                      fid_cq* cq, fid_ep** ep) {
  int rc = fi_endpoint(domain, info, ep, nullptr);
  if (rc == 0) rc = fi_ep_bind(*ep, &av->fid, 0);
  if (rc == 0) rc = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc == 0) rc = fi_enable(*ep);
  return rc;
}

int OpenRdmEndpoint(fi_info* info, fi_cq_format format, RdmEndpoint* out) {
  fi_av_attr av_attr = {};
  fi_cq_attr cq_attr = {};
  cq_attr.format = format;
  int rc = fi_fabric(info->fabric_attr, &out->fabric, nullptr);
  if (rc == 0) rc = fi_domain(out->fabric, info, &out->domain, nullptr);
  if (rc == 0) rc = fi_av_open(out->domain, &av_attr, &out->av, nullptr);
  if (rc == 0) rc = fi_cq_open(out->domain, &cq_attr, &out->cq, nullptr);
  if (rc == 0) {
    rc = OpenBoundEndpoint(out->domain, info, out->av, out->cq, &out->ep);
  }
  return rc;
}

void CloseRdmEndpoint(RdmEndpoint* endpoint) {
  if (endpoint->ep != nullptr) fi_close(&endpoint->ep->fid);
  if (endpoint->cq != nullptr) fi_close(&endpoint->cq->fid);
  if (endpoint->av != nullptr) fi_close(&endpoint->av->fid);
  if (endpoint->domain != nullptr) fi_close(&endpoint->domain->fid);
  if (endpoint->fabric != nullptr) fi_close(&endpoint->fabric->fid);
  *endpoint = {};
}

int CloseLoopbackDomain(LoopbackDomain* domain) {
  int rc = 0;
  if (domain->domain != nullptr) rc = fi_close(&domain->domain->fid);
  if (domain->fabric != nullptr) {
    int closed = fi_close(&domain->fabric->fid);
    if (rc == 0) rc = closed;
  }
  fi_freeinfo(domain->info);
  *domain = {};
  return rc;
}

int OpenTableAv(fid_domain* domain, fid_av** av) {
  fi_av_attr attr = {};
  attr.type = FI_AV_TABLE;
  return fi_av_open(domain, &attr, av, nullptr);
}

int OpenShmLoopback(size_t cq_size, LoopbackDomain* loopback, fid_av** av,
                    fid_cq** cq) {
  int rc = OpenLoopbackDomain(
      FI_EP_RDM, FI_MSG,
      [](fi_info* hints) { UseShm(hints, FI_PROGRESS_MANUAL); }, loopback);
  if (rc != 0) return rc;
  fi_av_attr av_attr = {};
  if ((rc = fi_av_open(loopback->domain, &av_attr, av, nullptr)) != 0) {
    return rc;
  }
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = cq_size;
  return fi_cq_open(loopback->domain, &cq_attr, cq, nullptr);
}

std::string ToHex(const void* data, size_t len) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string hex;
  for (size_t i = 0; i < len; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

bool FromHex(const char* text, void* out, size_t len) {
  auto* bytes = static_cast<unsigned char*>(out);
  for (size_t i = 0; i < 2 * len; ++i) {
    char c = text[i];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0) return false;  // also the end of a short text
    if (i % 2 == 0) {
      bytes[i / 2] = static_cast<unsigned char>(digit << 4);
    } else {
      bytes[i / 2] |= static_cast<unsigned char>(digit);
    }
  }
  return true;
}

}  // namespace tcp
}  // namespace fabric

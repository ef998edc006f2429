#include "fabric/providers/tcp/rdm_scale.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <string.h>

#include <chrono>

namespace fabric {
namespace tcp {
namespace {

constexpr size_t kCqSize = 4096;

uint32_t Checksum(const ScaleMessage& message) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&message);
  uint32_t hash = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < offsetof(ScaleMessage, checksum); ++i) {
    hash = (hash ^ bytes[i]) * 16777619u;
  }
  return hash;
}

int Report(const char* what, int rc) {
  if (rc != 0) fprintf(stderr, "%s: %s\n", what, fi_strerror(-rc));
  return rc;
}

}  // namespace

ScaleMessage MakeScaleMessage(uint32_t index, uint32_t answer) {
  ScaleMessage message = {};
  message.index = index;
  message.answer = answer;
  for (size_t i = 0; i < sizeof(message.payload); ++i) {
    message.payload[i] = static_cast<uint8_t>(index * 31 + i + answer * 7);
  }
  message.checksum = Checksum(message);
  return message;
}

bool IsScaleMessage(const ScaleMessage& message, uint32_t index,
                    uint32_t answer) {
  ScaleMessage expected = MakeScaleMessage(index, answer);
  return message.checksum == Checksum(message) &&
         memcmp(&message, &expected, sizeof(message)) == 0;
}

int ScaleDomain::Open(fi_wait_obj wait) {
  int rc = OpenLoopbackDomain(FI_EP_RDM, FI_MSG | FI_SOURCE,
                              [](fi_info* hints) {
                                hints->domain_attr->av_type = FI_AV_TABLE;
                                hints->domain_attr->data_progress =
                                    FI_PROGRESS_MANUAL;
                              },
                              &loopback_);
  if (rc != 0) return Report("opening the fabric and domain", rc);
  fi_av_attr av_attr = {};
  av_attr.type = FI_AV_TABLE;
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = kCqSize;
  cq_attr.wait_obj = wait;
  if ((rc = fi_av_open(loopback_.domain, &av_attr, &av_, nullptr)) != 0 ||
      (rc = fi_cq_open(loopback_.domain, &cq_attr, &cq_, nullptr)) != 0) {
    return Report("opening the AV and CQ", rc);
  }
  return 0;
}

int ScaleDomain::OpenEndpoint(fid_ep** ep, sockaddr_in* name) {
  size_t len = sizeof(*name);
  int rc;
  if ((rc = fi_endpoint(loopback_.domain, loopback_.info, ep, nullptr)) !=
          0 ||
      (rc = fi_ep_bind(*ep, &av_->fid, 0)) != 0 ||
      (rc = fi_ep_bind(*ep, &cq_->fid, FI_TRANSMIT | FI_RECV)) != 0 ||
      (rc = fi_enable(*ep)) != 0 ||
      (rc = fi_getname(&(*ep)->fid, name, &len)) != 0) {
    return Report("opening an endpoint", rc);
  }
  return 0;
}

int ScaleDomain::Close() {
  int rc = 0;
  for (fid* object : {cq_ ? &cq_->fid : nullptr, av_ ? &av_->fid : nullptr}) {
    if (object == nullptr) continue;
    int closed = Report("fi_close", fi_close(object));
    if (rc == 0) rc = closed;
  }
  cq_ = nullptr;
  av_ = nullptr;
  int closed = Report("fi_close", CloseObjects(&loopback_));
  return rc != 0 ? rc : closed;
}

int PostWithRetry(const std::function<ssize_t()>& post,
                  const std::function<int()>& progress, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(timeout_ms);
  for (;;) {
    ssize_t rc = post();
    if (rc != -FI_EAGAIN) return Report("posting", static_cast<int>(rc));
    if (std::chrono::steady_clock::now() > deadline) {
      return Report("posting", -FI_ETIMEDOUT);
    }
    if (int error = progress(); error != 0) return error;
  }
}

}  // namespace tcp
}  // namespace fabric

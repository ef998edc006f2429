#include "apps/common/wait.h"

#include <rdma/fi_errno.h>
#include <string.h>

#include <chrono>
#include <vector>

#include "apps/common/check.h"

namespace apps {
namespace {

using Clock = std::chrono::steady_clock;

// -FI_EAVAIL: reads the error entry into *error.
ssize_t ReadOne(fid_cq* cq, fi_cq_msg_entry* entry, fi_addr_t* source,
                fi_cq_err_entry* error, const char* what) {
  auto deadline = Clock::now() + std::chrono::seconds(kWaitSeconds);
  fi_addr_t ignored;
  while (Clock::now() < deadline) {
    ssize_t rc = fi_cq_readfrom(cq, entry, 1, source ? source : &ignored);
    if (rc == 1) return rc;
    if (rc == -FI_EAVAIL) {
      FI_CHECK(fi_cq_readerr(cq, error, 0));
      return rc;
    }
    if (rc != -FI_EAGAIN) Check(rc, "fi_cq_readfrom");
  }
  Fail("%s: no completion within %d s", what, kWaitSeconds);
}

}  // namespace

fi_cq_msg_entry WaitCompletion(fid_cq* cq, const char* what,
                               fi_addr_t* source) {
  fi_cq_msg_entry entry = {};
  fi_cq_err_entry error = {};
  if (ReadOne(cq, &entry, source, &error, what) == -FI_EAVAIL) {
    Fail("%s: completed with an error: %s (%s)", what, fi_strerror(error.err),
         fi_cq_strerror(cq, error.prov_errno, error.err_data, nullptr, 0));
  }
  return entry;
}

fi_cq_err_entry WaitError(fid_cq* cq, const char* what) {
  fi_cq_msg_entry entry = {};
  fi_cq_err_entry error = {};
  if (ReadOne(cq, &entry, nullptr, &error, what) != -FI_EAVAIL) {
    Fail("%s: completed without the expected error", what);
  }
  return error;
}

fi_eq_cm_entry WaitEvent(fid_eq* eq, uint32_t expected, const char* what,
                         std::string* data) {
  // An event: the entry, then up to 256 bytes of connection data.
  std::vector<char> buf(sizeof(fi_eq_cm_entry) + 256);
  uint32_t event = 0;
  ssize_t rc = fi_eq_sread(eq, &event, buf.data(), buf.size(),
                           kWaitSeconds * 1000, 0);
  if (rc == -FI_EAVAIL) {
    fi_eq_err_entry error = {};
    FI_CHECK(fi_eq_readerr(eq, &error, 0));
    Fail("%s: error event: %s (%s)", what, fi_strerror(error.err),
         fi_eq_strerror(eq, error.prov_errno, error.err_data, nullptr, 0));
  }
  if (rc == -FI_EAGAIN || rc == -FI_ETIMEDOUT) {
    Fail("%s: no event within %d s", what, kWaitSeconds);
  }
  Check(rc, "fi_eq_sread");
  if (event != expected) {
    std::string wanted = fi_tostr(&expected, FI_TYPE_EQ_EVENT);  // static
    Fail("%s: expected %s, got %s", what, wanted.c_str(),
         fi_tostr(&event, FI_TYPE_EQ_EVENT));
  }
  fi_eq_cm_entry entry;
  memcpy(&entry, buf.data(), sizeof(entry));
  if (data != nullptr) {
    size_t size = static_cast<size_t>(rc);
    data->assign(buf.data() + sizeof(entry),
                 size > sizeof(entry) ? size - sizeof(entry) : 0);
  }
  return entry;
}

}  // namespace apps

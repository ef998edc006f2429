#include "fabric/api/cxx/av.h"

#include <rdma/fi_errno.h>

namespace ofi {

absl::StatusOr<std::vector<fi_addr_t>> Av::Insert(const void* addrs,
                                                  size_t count,
                                                  uint64_t flags) {
  std::vector<fi_addr_t> fi_addrs(count, FI_ADDR_NOTAVAIL);
  int rc = fi_av_insert(get(), addrs, count, fi_addrs.data(), flags, nullptr);
  if (rc < 0) return ErrorStatus(rc, "fi_av_insert");
  if (static_cast<size_t>(rc) != count) {
    return ErrorStatus(-FI_EINVAL, "fi_av_insert (an address was refused)");
  }
  return fi_addrs;
}

absl::StatusOr<std::vector<char>> Av::Lookup(fi_addr_t fi_addr) const {
  std::vector<char> addr(128);
  size_t len = addr.size();
  int rc = fi_av_lookup(get(), fi_addr, addr.data(), &len);
  if (rc == 0 && len > addr.size()) {  // cut: ask again with room
    addr.resize(len);
    rc = fi_av_lookup(get(), fi_addr, addr.data(), &len);
  }
  if (rc != 0) return ErrorStatus(rc, "fi_av_lookup");
  addr.resize(len);
  return addr;
}

absl::Status Av::Remove(absl::Span<const fi_addr_t> fi_addrs) {
  int rc = fi_av_remove(get(), const_cast<fi_addr_t*>(fi_addrs.data()),
                        fi_addrs.size(), 0);
  return rc == 0 ? absl::OkStatus() : ErrorStatus(rc, "fi_av_remove");
}

std::string Av::ToString(const void* addr) const {
  char buf[256];
  size_t len = sizeof(buf);
  const char* text = fi_av_straddr(get(), addr, buf, &len);
  return text != nullptr ? std::string(text) : std::string();
}

absl::StatusOr<Av> OpenAv(const Domain& domain, const fi_av_attr& attr,
                          void* context) {
  fid_av* av = nullptr;
  fi_av_attr copy = attr;
  int rc = fi_av_open(domain.get(), &copy, &av, context);
  if (rc != 0) return ErrorStatus(rc, "fi_av_open");
  return Av(av);
}

}  // namespace ofi
